from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_log_mix.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _log_mix(a, b, p):\n    """log(p*exp(a) + (1 - p)*exp(b)), p in (0, 1), as max(a, b) + log1p(q*expm1(-|a - b|)), q the weight of the smaller argument: no overflow, and no cancellation where the result is near 0 (logaddexp(a + log(p), b + log(1 - p)) is 0 at a = b = 8e-10). Where a and b are one infinity, that infinity."""\n    big = tf.math.maximum(a, b)\n    gap = tf.where(tf.math.is_inf(big), tf.zeros_like(big), -tf.math.abs(a - b))\n    q = tf.where(a >= b, 1.0 - p, p)\n    return big + tf.math.log1p(q * tf.math.expm1(gap))\n'

blocks = {}
debug_info = ''