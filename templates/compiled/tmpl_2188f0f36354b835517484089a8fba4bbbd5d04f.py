from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_hypot.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _hypot(a, b):\n    """sqrt(a**2 + b**2), scaled by the larger magnitude so the squares cannot overflow."""\n    a = tf.math.abs(a)\n    b = tf.math.abs(b)\n    big = tf.math.maximum(a, b)\n    small = tf.math.minimum(a, b)\n    positive = big > 0\n    safe_big = tf.where(positive, big, tf.ones_like(big))\n    ratio = small / safe_big\n    return tf.where(positive, safe_big * tf.math.sqrt(1.0 + tf.math.square(ratio)), tf.zeros_like(big))\n'

blocks = {}
debug_info = ''