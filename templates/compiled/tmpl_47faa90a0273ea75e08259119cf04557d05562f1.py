from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_mills.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _mills(u):\n    """exp(-u**2) / (sqrt(pi) * erfc(u)), about u where exp and erfc underflow (u > 9.2 in float32); see _mills_parts.\n\n    Its gradient, 2 * mills * (mills - u), is given here from _mills_gap, which does not cancel.\n    """\n\n    def gradient(dy):\n        return dy * 2.0 * _mills(u) * _mills_gap(u)\n\n    return _mills_parts(u)[0], gradient\n'

blocks = {}
debug_info = ''