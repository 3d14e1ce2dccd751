from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lgamma_kernel.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lgamma_kernel(a, x):\n    """(a - 1)*log(x) - x - lgamma(a) for a >= 10, the log of the gamma density (a Poisson log-pmf k*log(l) - l - lgamma(k + 1) at a = k + 1), where the rule gamma_log_density takes it (below 10, a is held at 10). Near its mode x = a the terms, each about a*log(a), cancel to about -log(2*pi*a)/2 (11 bits lost at k = l = 1e4 in float32). From Stirling\'s series: a*(log(x/a) - d) - log(x) + log(a)/2 - log(2*pi)/2 - C(a), d = (x - a)/a, where nothing cancels: log(x/a) - d as log1pmx(d) for x >= a/2, below as log(x/a) - d (d rounds to -1 for x << a), log(x/a) as log(x) - log(a) where x/a nears the flush. At x <= 0, (a - 1)*log(x): -inf or NaN, as the function."""\n    a = tf.where(a >= 10.0, a, tf.fill(tf.shape(a), tf.constant(10.0, a.dtype)))\n    positive = x > 0.0\n    x_big = tf.where(positive, x, a)\n    d = (x_big - a) / a\n    log_x = tf.math.log(x_big)\n    log_a = tf.math.log(a)\n    lower = d < -0.5\n    ratio = x_big / a\n    normal = ratio > 1e-30\n    log_ratio = tf.where(normal, tf.math.log(tf.where(normal, ratio, tf.ones_like(ratio))), log_x - log_a)\n    less_first_order = tf.where(lower, log_ratio - d, _log1pmx(tf.where(lower, tf.zeros_like(d), d)))\n    stirling = a * less_first_order - log_x + 0.5 * log_a - 0.9189385332046728 - _lgamma_correction(a)\n    return tf.where(positive, stirling, (a - 1.0) * tf.math.log(tf.where(positive, tf.ones_like(x), x)))\n'

blocks = {}
debug_info = ''