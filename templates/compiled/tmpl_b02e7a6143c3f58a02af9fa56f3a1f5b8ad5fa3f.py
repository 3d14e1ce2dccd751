from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_tanh_softplus.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _tanh_softplus(u):\n    """tanh(softplus(u)) as n / (n + 2) with n = e * (e + 2), e = exp(u): ((1 + e)**2 - 1) / ((1 + e)**2 + 1) with nothing left to cancel, from one exp. For u >= 20 the value is 1 in float32 and float64, so e is held at exp(20).\n\n    Its gradient is _tanh_softplus_slope, given here: TF\'s own would be 0 beyond u = 20.\n    """\n\n    def gradient(dy):\n        return dy * _tanh_softplus_slope(u)\n\n    e = tf.math.exp(tf.math.minimum(u, 20.0))\n    n = e * (e + 2.0)\n    return n / (n + 2.0), gradient\n'

blocks = {}
debug_info = ''