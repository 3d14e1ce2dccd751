from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_cot_pi.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _cot_pi(x):\n    """cot(pi*x), with x reduced to r = x - round(x) in [-0.5, 0.5] exactly: 1/tan(pi*r) for |r| < 1/4, and tan(pi*(1/2 - |r|)) with r\'s sign beyond, so that neither rounds pi*r next to a pole of tan (at x = -0.5, 1/tan(pi*x) is -1.4e-7 in float32; the truth is 0). inf at an integer."""\n    r = x - tf.math.round(x)\n    small = tf.math.abs(r) < 0.25\n    inner = 1.0 / tf.math.tan(3.141592653589793 * tf.where(small, r, tf.zeros_like(r)))\n    outer = tf.math.sign(r) * tf.math.tan(3.141592653589793 * (0.5 - tf.math.abs(tf.where(small, 0.5 * tf.math.sign(r), r))))\n    return tf.where(small, inner, outer)\n'

blocks = {}
debug_info = ''