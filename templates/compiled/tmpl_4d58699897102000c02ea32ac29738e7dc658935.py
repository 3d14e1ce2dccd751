from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_sinpi.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _sinpi(x):\n    """sin(pi*x), with x reduced exactly before pi multiplies it: r = x - 2*round(x/2) in [-1, 1], n = round(2*r), t = r - n/2 in [-1/4, 1/4]; sin(pi*x) is sin(pi*t), cos(pi*t), -sin(pi*t) or -cos(pi*t) as n mod 4 is 0, 1, 2 or 3. 0 at every integer (sin(pi*x) as written rounds pi*x first)."""\n    r = x - 2.0 * tf.math.round(0.5 * x)\n    n = tf.math.round(2.0 * r)\n    t = 3.141592653589793 * (r - 0.5 * n)\n    s = tf.math.sin(t)\n    c = tf.math.cos(t)\n    k = tf.math.floormod(n, 4.0)\n    return tf.where(k == 0.0, s, tf.where(k == 1.0, c, tf.where(k == 2.0, -s, -c)))\n'

blocks = {}
debug_info = ''