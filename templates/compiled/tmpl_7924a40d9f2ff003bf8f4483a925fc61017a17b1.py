from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_sigmoid_slope.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _sigmoid_slope(u):\n    """sigmoid(u) * sigmoid(-u) as 1 / (exp(u) + 2 + exp(-u)): 0.41 mean bits in float32 against 1.1 for two sigmoids.\n\n    Its gradient, -slope * tanh(u/2), is given here: TF\'s own would be inf * 0 where exp(|u|) overflows.\n    """\n\n    def gradient(dy):\n        return dy * -_sigmoid_slope(u) * tf.math.tanh(0.5 * u)\n\n    return 1 / (tf.math.exp(u) + 2 + tf.math.exp(-u)), gradient\n'

blocks = {}
debug_info = ''