from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mul_pow.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _mul_pow(c, b, w):\n    """c * b**w as (c * b**(w/2)) * b**(w/2): finite wherever the product is, though b**w alone may overflow. b**(w/2) is held below the dtype\'s largest float, so the product is 0 where c is 0."""\n    half = tf.math.pow(b, 0.5 * w)\n    half = tf.math.minimum(half, half.dtype.max)\n    return tf.math.multiply_no_nan(c, half) * half\n'

blocks = {}
debug_info = ''