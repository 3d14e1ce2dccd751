from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_product_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _product_error(a, b, a_residual=0.0):\n    """a*b - fl(a*b), exactly (Dekker\'s TwoProduct of halves): the rounding error of the product.\n    For a constant a, a_residual is what the dtype\'s a lacks of the exact constant: its\n    product with b is added.\n\n    0 where a or b is below 2**-100 (2**-969 in float64), whose halves may flush to 0.\n    Unbounded (NaN where the operation overflows): _bounded_error bounds the argument\'s error\n    as a whole. No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    a_high, a_low = _split_halves(a)\n    b_high, b_low = _split_halves(b)\n    error = (((a_high * b_high - a * b) + a_high * b_low) + a_low * b_high) + a_low * b_low + b * a_residual\n    return tf.stop_gradient(tf.where(_splits(a, b), error, tf.zeros_like(error)))\n\n\ndef _splits(a, b):\n    """Where a and b split into halves that multiply exactly: neither below 2**-100 (2**-969 in float64)."""\n    smallest = 2.0**-969 if a.dtype == tf.float64 else 2.0**-100\n    return tf.math.minimum(tf.math.abs(a), tf.math.abs(b)) >= smallest\n'

blocks = {}
debug_info = ''