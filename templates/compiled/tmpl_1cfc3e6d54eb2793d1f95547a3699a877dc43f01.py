from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mills_parts.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _mills_parts(u):\n    """(t, r): t = exp(-u**2) / (sqrt(pi) * erfc(u)), erfc\'s hazard, and r = t - u, neither underflowing nor cancelling.\n\n    Below `start` t is that quotient (exp and erfc are far from underflow there) and r = t - u. From `start` on, r is erfc\'s continued fraction (1/2) / (u + 1 / (u + (3/2) / (u + ...))), `depth` levels deep, the rest estimated by their fixed point: within an ulp of the dtype from there on. Then t = u + r. Below `start`, r loses up to 2.5 bits to the cancellation (t is 5.6r at u = 1.25).\n    """\n    start, depth = (2.0, 48) if u.dtype == tf.float64 else (1.25, 24)\n    near = u < start\n    u_near = tf.where(near, u, tf.zeros_like(u))\n    u_far = tf.math.maximum(u, start)\n    t_near = tf.math.exp(-tf.math.square(u_near)) / (1.7724538509055159 * tf.math.erfc(u_near))\n    # The levels below `depth`, s = u + (k/2)/s, as their fixed point: 1e-8 instead of 2e-6 at 24 levels.\n    s = 0.5 * (u_far + tf.math.sqrt(tf.math.square(u_far) + 2.0 * (depth + 1)))\n    for k in range(depth, 1, -1):\n        s = u_far + (0.5 * k) / s\n    r_far = 0.5 / s\n    return tf.where(near, t_near, u_far + r_far), tf.where(near, t_near - u_near, r_far)\n'

blocks = {}
debug_info = ''