from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_tanh_softplus_slope.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield '@tf.custom_gradient\ndef _tanh_softplus_slope(u):\n    """d/du tanh(softplus(u)) = 4 e (1 + e) / (e (e + 2) + 2)**2 with e = exp(u), as 4e/d times a ratio of at most 1 (4e first: e/d would flush to 0 near u = -87 in float32). e is held where e (e + 2) overflows (u = 50 in float32, 400 in float64), and the ratios are then 0, as the slope is.\n\n    Its gradient, slope * (sigmoid(-u) - 2 sigmoid(u) tanh(softplus(u))), is given here: TF\'s own would be 0 beyond the hold.\n    """\n\n    def gradient(dy):\n        gate = _tanh_softplus(u)\n        return dy * _tanh_softplus_slope(u) * (tf.math.sigmoid(-u) - 2.0 * tf.math.sigmoid(u) * gate)\n\n    e = tf.math.exp(tf.math.minimum(u, 400.0 if u.dtype == tf.float64 else 50.0))\n    d = e * (e + 2.0) + 2.0\n    return 4.0 * e / d * ((1.0 + e) / d), gradient\n'

blocks = {}
debug_info = ''