from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_product_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _product_error(a, b, a_residual=0.0):\n    """a*b - fl(a*b), exactly (Dekker\'s TwoProduct): the rounding error of the product, for a steep function of it.\n\n    0 where |fl(a*b)| > 4096: beyond it every function this corrects (exp, sigmoid,\n    softplus, erfc) has saturated, over- or underflowed, in float32 and float64, and an error\n    as large as the argument\'s ulp (NaN where it overflowed) could only spoil the value.\n    No gradient flows through it: it is 0 in exact arithmetic. For a constant a, a_residual\n    is what the dtype\'s a lacks of the exact constant: its product with b is added.\n    """\n    a_high, a_low = _split_halves(a)\n    b_high, b_low = _split_halves(b)\n    total = a * b\n    error = (((a_high * b_high - total) + a_high * b_low) + a_low * b_high) + a_low * b_low + b * a_residual\n    # Halves of a factor below 2**-100 (2**-969 in float64) may flush to 0: the error is not exact there.\n    smallest = 2.0**-969 if a.dtype == tf.float64 else 2.0**-100\n    exact = tf.math.logical_and(\n        tf.math.abs(total) <= 4096.0, tf.math.minimum(tf.math.abs(a), tf.math.abs(b)) >= smallest\n    )\n    return tf.stop_gradient(tf.where(exact, error, tf.zeros_like(error)))\n\n'

blocks = {}
debug_info = ''