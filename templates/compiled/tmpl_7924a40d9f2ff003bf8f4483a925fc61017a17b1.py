from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_sigmoid_slope.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _sigmoid_slope(u):\n    """sigmoid(u) * sigmoid(-u) as e / (1 + e)**2 with e = exp(-|u|): one exp, and half the rounding error of two sigmoids.\n\n    Its gradient, -slope * tanh(u/2), is given here: TF\'s own would take abs\' at u = 0 as 0.\n    """\n\n    def gradient(dy):\n        return dy * -_sigmoid_slope(u) * tf.math.tanh(0.5 * u)\n\n    e = tf.math.exp(-tf.math.abs(u))\n    return e / tf.math.square(1 + e), gradient\n'

blocks = {}
debug_info = ''