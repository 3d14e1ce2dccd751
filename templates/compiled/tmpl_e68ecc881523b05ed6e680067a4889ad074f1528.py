from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_hypot_ratio_gap.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _hypot_ratio_gap(a, b):\n    """(a - b) / sqrt(a**2 + b**2): a - b taken before any scaling (halved where large, so that it cannot overflow), so that it does not cancel where a is near b as hypot_ratio(a, b) - hypot_ratio(b, a) does; then over the larger magnitude and the scaled hypot; 0 at a = b = 0."""\n    big = tf.math.maximum(tf.math.abs(a), tf.math.abs(b))\n    positive = big > 0\n    safe = tf.where(positive, big, tf.ones_like(big))\n    large = big > 1.0\n    gap = tf.where(large, 0.5 * a - 0.5 * b, a - b) / tf.where(large, 0.5 * safe, safe)\n    scaled = tf.math.sqrt(tf.math.square(a / safe) + tf.math.square(b / safe))\n    return tf.where(positive, gap / scaled, tf.zeros_like(big))\n'

blocks = {}
debug_info = ''