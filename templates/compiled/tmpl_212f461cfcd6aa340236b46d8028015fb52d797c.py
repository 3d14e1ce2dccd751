from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mills_gap_slope.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _mills_gap_slope(u):\n    """2 * _mills(u) * _mills_gap(u) - 1, _mills_gap\'s slope, without the cancellation: about -1 / (2u**2) for large u; see _mills_parts.\n\n    Its gradient, 2 * mills * c, is given here from _mills_curvature, which does not cancel.\n    """\n\n    def gradient(dy):\n        return dy * 2.0 * _mills(u) * _mills_curvature(u)\n\n    return _mills_parts(u)[2], gradient\n'

blocks = {}
debug_info = ''