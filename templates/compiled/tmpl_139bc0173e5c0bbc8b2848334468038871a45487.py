from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_division_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _division_error(a, b):\n    """a/b - fl(a/b), the rounding error of the quotient, for a steep function of it: with\n    q = fl(a/b), the remainder a - q*b is exact, as (a - fl(q*b)) less q*b\'s own rounding\n    error (TwoProduct of halves, as _product_error\'s but with no bound on q*b, which is near a).\n\n    0 where |q| > 4096 (see _add_error), or where q or b is below 2**-100 (2**-969 in float64),\n    whose halves may flush. No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    q = a / b\n    q_high, q_low = _split_halves(q)\n    b_high, b_low = _split_halves(b)\n    product = q * b\n    product_error = (((q_high * b_high - product) + q_high * b_low) + q_low * b_high) + q_low * b_low\n    error = ((a - product) - product_error) / b\n    smallest = 2.0**-969 if q.dtype == tf.float64 else 2.0**-100\n    keep = tf.math.logical_and(\n        tf.math.abs(q) <= 4096.0, tf.math.minimum(tf.math.abs(q), tf.math.abs(b)) >= smallest\n    )\n    return tf.stop_gradient(tf.where(keep, error, tf.zeros_like(error)))\n'

blocks = {}
debug_info = ''