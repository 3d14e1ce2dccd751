from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_hypot_ratio.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _hypot_ratio(a, b):\n    """a / sqrt(a**2 + b**2), both scaled by the larger magnitude, so that neither the squares nor hypot overflow; 0 at a = b = 0."""\n    big = tf.math.maximum(tf.math.abs(a), tf.math.abs(b))\n    positive = big > 0\n    safe = tf.where(positive, big, tf.ones_like(big))\n    a = a / safe\n    b = b / safe\n    return tf.where(positive, a / tf.math.sqrt(tf.math.square(a) + tf.math.square(b)), tf.zeros_like(big))\n'

blocks = {}
debug_info = ''