from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_polyval.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _polyval(coeffs, x):\n    """Horner\'s rule, highest degree first, in x\'s dtype (tf.math.polyval makes constants float32)."""\n    result = tf.zeros_like(x) + coeffs[0]\n    for coeff in coeffs[1:]:\n        result = result * x + coeff\n    return result\n'

blocks = {}
debug_info = ''