from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mul_exp.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _mul_exp(c, u):\n    """c * exp(u) as (c * exp(u/2)) * exp(u/2): finite wherever the product is, though exp(u) alone may overflow or flush to 0; 0 where c is 0, even where exp(u) overflows."""\n    half = tf.math.exp(0.5 * u)\n    return tf.math.multiply_no_nan(half, tf.math.multiply_no_nan(half, c))\n'

blocks = {}
debug_info = ''