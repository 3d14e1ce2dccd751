from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lowered_no_nan.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lowered_no_nan(p, u):\n    """_lowered(p, u), but 0 where u is lifted and p is inf or NaN: p guarded an inf*0 with multiply_no_nan, 0 where its decaying factor flushed, and the lifted factor does not flush; the true value there is at most |p|*exp(-80)."""\n    far = u < (-700.0 if u.dtype == tf.float64 else -80.0)\n    return tf.where(far & ~tf.math.is_finite(p), tf.zeros_like(p), _lowered(p, u))\n'

blocks = {}
debug_info = ''