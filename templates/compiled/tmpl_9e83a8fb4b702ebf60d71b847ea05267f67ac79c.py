from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lgamma_correction_gap.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lgamma_correction_gap(y, x, z):\n    """C(y) - C(z) for z = y + x >= 10 and y >= 10 (_lgamma_correction), as x*u*v*sum_k B_2k/(2k(2k - 1)) h_{2k-2}(u, v), u = 1/y, v = 1/z (_power_sums): the difference does not cancel where x is small beside y."""\n    terms = 9 if y.dtype == tf.float64 else 4\n    u = 1.0 / y\n    v = 1.0 / z\n    sums = _power_sums(u, v, 2 * terms - 2)\n    total = tf.zeros_like(y)\n    for k in reversed(range(1, terms + 1)):\n        total = total + _bernoulli(k) / (2 * k * (2 * k - 1)) * sums[2 * k - 2]\n    return (x * v) * u * total\n'

blocks = {}
debug_info = ''