from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_square_error.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _square_error(u):\n    """u*u - fl(u*u), the rounding error of the square, for a steep function of it: with u split\n    into halves that multiply exactly, u**2 = high**2 + low*(u + high), and only the last product\n    rounds, at 2**-11 of the square, far below the error.\n\n    0 where fl(u*u) > 4096: beyond it every function this corrects (exp, sigmoid, softplus,\n    erfc) has saturated, over- or underflowed, in float32 and float64, and an error as large\n    as the argument\'s ulp (NaN where it overflowed) could only spoil the value.\n    No gradient flows through it: it is 0 in exact arithmetic.\n    """\n    high, low = _split_halves(u)\n    total = u * u\n    error = (high * high - total) + low * (u + high)\n    return tf.stop_gradient(tf.where(total <= 4096.0, error, tf.zeros_like(error)))\n'

blocks = {}
debug_info = ''