from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_bounded_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _bounded_error(error, u):\n    """error, u\'s rounding error carried through the operations that compute u, where |u| <= 4096\n    and the error is finite; 0 elsewhere. Beyond 4096 every function it corrects (exp, sigmoid,\n    softplus, erfc) has saturated, over- or underflowed, in float32 and float64, and an error as\n    large as u\'s ulp (NaN where an operation overflowed) could only spoil the value."""\n    keep = tf.math.logical_and(tf.math.abs(u) <= 4096.0, tf.math.is_finite(error))\n    return tf.where(keep, error, tf.zeros_like(error))\n'

blocks = {}
debug_info = ''