from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mills_parts.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _mills_parts(u):\n    """(t, r, d, c): t = exp(-u**2) / (sqrt(pi) * erfc(u)), erfc\'s hazard, r = t - u, d = 2*t*r - 1 (r\'s slope) and c = 2*r**2 + d (t\'\'/(2t)), none underflowing nor cancelling.\n\n    Below `start` they are computed so from the quotient, in float64 (exp and erfc are far from underflow there; r, d and c cancel, c by up to 10 bits at u = 2, which float64 holds for float32 but not for itself). From `start` on, erfc\'s continued fraction: s_k = u + (k/2)/s_(k+1), `depth` levels deep, the rest estimated by their fixed point (within an ulp of the dtype from there on); r = (1/2)/s_2, d = (r - 1/s_3)/s_2 and c = (1/s_3)*((3/2)/s_4 - 1/s_3)/s_2**2, where r is about 1/(2u), 1/s_3 about 1/u and (3/2)/s_4 about 3/(2u).\n    """\n    start, depth = (2.0, 64) if u.dtype == tf.float64 else (2.0, 24)\n    near = u < start\n    u_near = tf.cast(tf.where(near, u, tf.zeros_like(u)), tf.float64)\n    t_near = tf.math.exp(-tf.math.square(u_near)) / (1.7724538509055159 * tf.math.erfc(u_near))\n    r_near = t_near - u_near\n    d_near = 2.0 * t_near * r_near - 1.0\n    c_near = 2.0 * tf.math.square(r_near) + d_near\n    t_near, r_near, d_near, c_near = (tf.cast(part, u.dtype) for part in (t_near, r_near, d_near, c_near))\n    u_far = tf.math.maximum(u, start)\n    # The levels below `depth`, s = u + (k/2)/s, as their fixed point: 1e-8 instead of 2e-6 at 24 levels.\n    s = 0.5 * (u_far + tf.math.sqrt(tf.math.square(u_far) + 2.0 * (depth + 1)))\n    for k in range(depth, 3, -1):\n        s = u_far + (0.5 * k) / s\n    level = 1.5 / s\n    rest = 1.0 / (u_far + level)\n    s = u_far + rest\n    r_far = 0.5 / s\n    return (\n        tf.where(near, t_near, u_far + r_far),\n        tf.where(near, r_near, r_far),\n        tf.where(near, d_near, (r_far - rest) / s),\n        tf.where(near, c_near, rest * (level - rest) / tf.math.square(s)),\n    )\n'

blocks = {}
debug_info = ''