from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_logaddexp_any.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _logaddexp_any(a, b):\n    """log(exp(a) + exp(b)) as _logaddexp, where a and b may both be one infinity (an argument\n    such as -x**2/2 that overflowed): that infinity, where |a - b| would be inf - inf = NaN."""\n    big = tf.math.maximum(a, b)\n    gap = tf.where(tf.math.is_inf(big), tf.zeros_like(big), -tf.math.abs(a - b))\n    return big + tf.math.log1p(tf.math.exp(gap))\n'

blocks = {}
debug_info = ''