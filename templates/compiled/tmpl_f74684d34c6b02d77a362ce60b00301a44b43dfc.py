from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_log_digamma_gap.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _log_digamma_gap(x, a):\n    """log(x) - digamma(a), which cancels where x is near a and a is large (5e-5 at x = a = 1e4, where log(x) has an ulp of 1e-6 in float32). Where a >= 10, log(x/a) + (log(a) - digamma(a)), the latter from its asymptotic series 1/(2a) + sum_k B_2k/(2k*a**2k) (4 terms in float32, 9 in float64), log(x/a) as log1p((x - a)/a) within a/2 of a, as log(x) - log(a) where x/a nears the flush; elsewhere as written."""\n    big = a >= 10.0\n    a_big = tf.where(big, a, tf.fill(tf.shape(a), tf.constant(10.0, a.dtype)))\n    x_big = tf.where(big, x, a_big)\n    r2 = tf.math.square(1.0 / a_big)\n    terms = 9 if a.dtype == tf.float64 else 4\n    series = tf.zeros_like(a_big)\n    for k in reversed(range(1, terms + 1)):\n        series = series * r2 + _bernoulli(k) / (2 * k)\n    d = (x_big - a_big) / a_big\n    near = tf.math.abs(d) <= 0.5\n    ratio = x_big / a_big\n    normal = ratio > 1e-30\n    log_ratio = tf.where(\n        near,\n        tf.math.log1p(tf.where(near, d, tf.zeros_like(d))),\n        tf.where(normal, tf.math.log(tf.where(normal, ratio, tf.ones_like(ratio))), tf.math.log(x_big) - tf.math.log(a_big)),\n    )\n    plain = tf.math.log(x) - _digamma(tf.where(big, tf.ones_like(a), a))\n    return tf.where(big, log_ratio + (0.5 / a_big + series * r2), plain)\n'

blocks = {}
debug_info = ''