from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_pi_reduced.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _pi_reduced(x):\n    """(sin(pi*t), cos(pi*t), n mod 4) with x = t + n/2 + 2*k, |t| <= 1/4, each step exact: r = x - 2*round(x/2) in [-1, 1], n = round(2*r), t = r - n/2. Only pi*t rounds (sin(pi*x) as written rounds pi*x first)."""\n    r = x - 2.0 * tf.math.round(0.5 * x)\n    n = tf.math.round(2.0 * r)\n    t = 3.141592653589793 * (r - 0.5 * n)\n    return tf.math.sin(t), tf.math.cos(t), tf.math.floormod(n, 4.0)\n'

blocks = {}
debug_info = ''