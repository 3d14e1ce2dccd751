from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_expm1mx.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _expm1mx(u):\n    """expm1(u) - u, without the cancellation that loses all of its u**2/2 near u = 0: u**2*(1/2 + u/6 + u**2/24 + ...), summed to the dtype\'s precision, for |u| < 1; beyond it expm1(u) - u, which cancels by 2.7x at most."""\n    near = tf.math.abs(u) < 1.0\n    u_near = tf.where(near, u, tf.zeros_like(u))\n    coeffs = [0.5]\n    for k in range(3, 20 if u.dtype == tf.float64 else 13):\n        coeffs.append(coeffs[-1] / k)\n    series = _polyval(coeffs[::-1], u_near)\n    # u at most 1e4 beside expm1(u), which is inf from 88.7 (709.8 in float64): inf, not inf - inf, at u = inf.\n    return tf.where(near, tf.math.square(u_near) * series, tf.math.expm1(u) - tf.math.minimum(u, 1e4))\n'

blocks = {}
debug_info = ''