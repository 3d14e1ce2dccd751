from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lift.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lift(u):\n    """u + 40 where u < -80 (u + 600 where u < -700 in float64), exactly: the argument of a factor that decays as exp(u), moved to where it is a normal number; _lowered scales the product back."""\n    if u.dtype == tf.float64:\n        return tf.where(u < -700.0, u + 600.0, u)\n    return tf.where(u < -80.0, u + 40.0, u)\n'

blocks = {}
debug_info = ''