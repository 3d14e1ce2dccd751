from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_add_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _add_error(a, b):\n    """a + b - fl(a + b), exactly (Knuth\'s TwoSum): the rounding error of the sum.\n\n    Unbounded (NaN where the operation overflows): _bounded_error bounds the argument\'s error\n    as a whole. No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    total = a + b\n    b_part = total - a\n    return tf.stop_gradient((a - (total - b_part)) + (b - b_part))\n'

blocks = {}
debug_info = ''