from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_division_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _division_error(a, b):\n    """a/b - fl(a/b), the rounding error of the quotient: with q = fl(a/b), the remainder\n    a - q*b is exact, as (a - fl(q*b)) less q*b\'s own rounding error (_product_error).\n\n    0 where q or b is below 2**-100 (2**-969 in float64), whose halves may flush to 0.\n    Unbounded (NaN where the operation overflows): _bounded_error bounds the argument\'s error\n    as a whole. No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    q = a / b\n    error = ((a - q * b) - _product_error(q, b)) / b\n    return tf.stop_gradient(tf.where(_splits(q, b), error, tf.zeros_like(error)))\n'

blocks = {}
debug_info = ''