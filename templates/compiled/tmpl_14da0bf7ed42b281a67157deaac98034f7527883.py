from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_exp_finite.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _exp_finite(u):\n    """exp(u), held at exp(87) (float32) or exp(708) (float64) where exp(u) overflows: far out, inf/inf and inf * 0 become the finite limit."""\n    return tf.math.exp(tf.math.minimum(u, 708.0 if u.dtype == tf.float64 else 87.0))\n'

blocks = {}
debug_info = ''