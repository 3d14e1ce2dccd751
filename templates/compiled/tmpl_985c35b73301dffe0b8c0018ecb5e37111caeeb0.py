from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_sub_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _sub_error(a, b):\n    """a - b - fl(a - b), exactly (Knuth\'s TwoSum of a and -b): the rounding error of the difference, for a steep function of it.\n\n    0 where |fl(a - b)| > 4096: beyond it every function this corrects (exp, sigmoid,\n    softplus, erfc) has saturated, over- or underflowed, in float32 and float64, and an error\n    as large as the argument\'s ulp (NaN where it overflowed) could only spoil the value.\n    No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    total = a - b\n    b_part = total - a\n    error = (a - (total - b_part)) - (b + b_part)\n    return tf.stop_gradient(tf.where(tf.math.abs(total) <= 4096.0, error, tf.zeros_like(error)))\n'

blocks = {}
debug_info = ''