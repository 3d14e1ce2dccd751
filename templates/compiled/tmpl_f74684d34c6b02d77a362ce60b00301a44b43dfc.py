from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_log_digamma_gap.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _log_digamma_gap(x, a):\n    """log(x) - digamma(a) for a >= 10, where the rule log_digamma takes it (below 10, a is held at 10): the terms cancel where x is near a (5e-5 at x = a = 1e4, where log(x) has an ulp of 1e-6 in float32). log(x/a) + (log(a) - digamma(a)), the latter from its asymptotic series 1/(2a) + sum_k B_2k/(2k*a**2k) (4 terms in float32, 9 in float64), log(x/a) as log1p((x - a)/a) within a/2 of a, as log(x) - log(a) where x/a nears the flush."""\n    a = tf.where(a >= 10.0, a, tf.fill(tf.shape(a), tf.constant(10.0, a.dtype)))\n    r2 = tf.math.square(1.0 / a)\n    terms = 9 if a.dtype == tf.float64 else 4\n    series = tf.zeros_like(a)\n    for k in reversed(range(1, terms + 1)):\n        series = series * r2 + _bernoulli(k) / (2 * k)\n    d = (x - a) / a\n    near = tf.math.abs(d) <= 0.5\n    ratio = x / a\n    normal = ratio > 1e-30\n    log_ratio = tf.where(\n        near,\n        tf.math.log1p(tf.where(near, d, tf.zeros_like(d))),\n        tf.where(normal, tf.math.log(tf.where(normal, ratio, tf.ones_like(ratio))), tf.math.log(x) - tf.math.log(a)),\n    )\n    return log_ratio + (0.5 / a + series * r2)\n'

blocks = {}
debug_info = ''