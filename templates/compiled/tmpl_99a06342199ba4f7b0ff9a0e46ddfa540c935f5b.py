from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mills_curvature.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _mills_curvature(u):\n    """2 * _mills_gap(u)**2 + _mills_gap_slope(u), _mills\'\'/(2 * _mills), without the cancellation: about 1 / (2u**4) for large u; see _mills_parts.\n\n    Its gradient is 4 * gap * slope + 2 * mills * c (which cancels for large u: beyond the orders the generator measures).\n    """\n\n    def gradient(dy):\n        return dy * (4.0 * _mills_gap(u) * _mills_gap_slope(u) + 2.0 * _mills(u) * _mills_curvature(u))\n\n    return _mills_parts(u)[3], gradient\n'

blocks = {}
debug_info = ''