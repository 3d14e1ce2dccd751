from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lgamma_correction.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lgamma_correction(z):\n    """C(z) = lgamma(z) - ((z - 1/2)*log(z) - z + log(2*pi)/2) = sum_k B_2k/(2k(2k - 1)) z**(1 - 2k), Stirling\'s series for z >= 10 (4 terms in float32, 9 in float64)."""\n    terms = 9 if z.dtype == tf.float64 else 4\n    r = 1.0 / z\n    total = tf.zeros_like(z)\n    for k in reversed(range(1, terms + 1)):\n        total = total * tf.math.square(r) + _bernoulli(k) / (2 * k * (2 * k - 1))\n    return total * r\n'

blocks = {}
debug_info = ''