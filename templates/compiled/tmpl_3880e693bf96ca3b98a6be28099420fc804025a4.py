from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_hypot_ratio.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _hypot_ratio(a, b):\n    """a / sqrt(a**2 + b**2), both scaled by the larger magnitude, so that neither the squares nor hypot overflow; 0 at a = b = 0. Where a leg has overflowed to an infinity, the ratio\'s value where the other leg decides it: +-1 where a is infinite and |b| is below the largest float by more than the precision (x*y/hypot(1, x*y) at x*y = inf), 0 where b is and |a| < 4 (the ratio flushes); NaN where it is unknown. The branch not taken computes on 1 and 0, so that its gradients are finite."""\n    big = tf.math.maximum(tf.math.abs(a), tf.math.abs(b))\n    usable = (big > 0) & tf.math.is_finite(big)\n    safe = tf.where(usable, big, tf.ones_like(big))\n    a_scaled = tf.where(usable, a, tf.ones_like(a)) / safe\n    b_scaled = tf.where(usable, b, tf.zeros_like(b)) / safe\n    ratio = a_scaled / tf.math.sqrt(tf.math.square(a_scaled) + tf.math.square(b_scaled))\n    flushed = tf.where(tf.math.abs(a) < 4.0, tf.zeros_like(a), (a + b) * 0.0)\n    far = tf.where(tf.math.abs(b) < (1.3e300 if a.dtype == tf.float64 else 8.3e34), tf.math.sign(a), flushed)\n    return tf.where(usable, ratio, far)\n'

blocks = {}
debug_info = ''