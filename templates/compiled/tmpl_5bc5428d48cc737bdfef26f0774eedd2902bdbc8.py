from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lgamma_stirling_gap.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lgamma_stirling_gap(y, x):\n    """lgamma(y) - lgamma(y + x) for y and y + x >= 10, from Stirling\'s series: x*(1 - (1 - 1/(2y))*log1p(t)/t - log(y + x)) + C(y) - C(y + x), t = x/y (log1p(t)/t from its series where t underflows: lgamma(6e36) - lgamma(6e36 + 7e-25)), the corrections\' difference by _lgamma_correction_gap; nothing cancels where x is small beside y."""\n    z = y + x\n    t = x / y\n    small = tf.math.abs(t) < 2.0**-20\n    ts = tf.where(small, tf.ones_like(t), t)\n    ratio = tf.where(small, 1.0 - t * (0.5 - t / 3.0), tf.math.log1p(ts) / ts)\n    return x * (1.0 - (1.0 - 0.5 / y) * ratio - tf.math.log(z)) + _lgamma_correction_gap(y, x, z)\n'

blocks = {}
debug_info = ''