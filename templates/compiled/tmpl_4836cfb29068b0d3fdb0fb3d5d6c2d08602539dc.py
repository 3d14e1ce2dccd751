from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mills_gap.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _mills_gap(u):\n    """_mills(u) - u without the cancellation: about 1 / (2u) for large u; see _mills_parts.\n\n    Its gradient, 2 * mills * gap - 1, is given here from _mills_gap_slope, which does not cancel.\n    """\n\n    def gradient(dy):\n        return dy * _mills_gap_slope(u)\n\n    return _mills_parts(u)[1], gradient\n'

blocks = {}
debug_info = ''