from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_square_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _square_error(u):\n    """u*u - fl(u*u), the rounding error of the square: with u split into halves that multiply\n    exactly, u**2 = high**2 + low*(u + high), and only the last product rounds, at 2**-11 of\n    the square, far below the error.\n\n    Unbounded (NaN where the operation overflows): _bounded_error bounds the argument\'s error\n    as a whole. No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    high, low = _split_halves(u)\n    return tf.stop_gradient((high * high - u * u) + low * (u + high))\n'

blocks = {}
debug_info = ''