from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_compensated_sum.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _compensated_sum(total, error):\n    """total plus its rounding error, carried through the operations that compute its terms (0 where that is not finite), as total - (-error): a subtraction, which Grappler\'s arithmetic optimizer does not gather with the additions inside total into one sum of its own order."""\n    return total - tf.where(tf.math.is_finite(error), -error, tf.zeros_like(error))\n'

blocks = {}
debug_info = ''