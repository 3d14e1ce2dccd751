from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lowered.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lowered(p, u):\n    """p times exp(-40) where u < -80 (exp(-600) where u < -700 in float64), last: p was computed with its decaying factors at _lift(u), so that they did not flush to 0 where the whole is a normal number."""\n    if u.dtype == tf.float64:\n        return tf.where(u < -700.0, p * 2.6503965530043108e-261, p)\n    return tf.where(u < -80.0, p * 4.248354255291589e-18, p)\n'

blocks = {}
debug_info = ''