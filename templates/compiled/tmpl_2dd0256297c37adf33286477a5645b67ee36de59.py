from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mul_exp.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _mul_exp(c, u):\n    """c * exp(u) as (c * exp(u/2)) * exp(u/2): finite wherever the product is, though exp(u) alone may overflow or flush to 0. u/2 is held where exp(u/2) is finite, so the product is 0 where c is 0, and 0 where exp(u/2) flushes to 0, even where c overflowed."""\n    half = tf.math.exp(0.5 * tf.math.minimum(u, 1418.0 if u.dtype == tf.float64 else 176.0))\n    return tf.math.multiply_no_nan(c, half) * half\n'

blocks = {}
debug_info = ''