from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_log1pmx.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _log1pmx(t):\n    """log1p(t) - t, without the cancellation that loses all of its t**2/2 near t = 0. With r = t/(2 + t), log1p(t) = 2*atanh(r) = 2*(r + r**3/3 + r**5/5 + ...) and t - 2*r = r*t, so log1p(t) - t = r*(2*r**2*(1/3 + r**2/5 + ...) - t): summed to the dtype\'s precision for |r| <= 1/2 (t in [-2/3, 2]), where nothing in it cancels. Beyond, log1p(t) - t, which cancels by 2.2x at most; -t above 2**60, where log1p(t) is lost in t (inf - inf at t = inf)."""\n    near = tf.math.logical_and(t >= -2.0 / 3.0, t <= 2.0)\n    t_near = tf.where(near, t, tf.zeros_like(t))\n    r = t_near / (2.0 + t_near)\n    z = tf.math.square(r)\n    terms = 26 if t.dtype == tf.float64 else 12\n    series = _polyval([1.0 / (2 * k + 3) for k in reversed(range(terms))], z)\n    far = tf.where(t > 2.0**60, -t, tf.math.log1p(t) - t)\n    return tf.where(near, r * (2.0 * z * series - t_near), far)\n'

blocks = {}
debug_info = ''