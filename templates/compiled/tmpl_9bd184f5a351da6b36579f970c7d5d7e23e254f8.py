from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_pnorm_ratio.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _pnorm_ratio(a, b, p):\n    """|a| / (|a|**p + |b|**p)**(1/p), both scaled by the larger magnitude, so that neither the powers nor the norm overflow; 0 at a = b = 0."""\n    a = tf.math.abs(a)\n    b = tf.math.abs(b)\n    big = tf.math.maximum(a, b)\n    positive = big > 0\n    safe = tf.where(positive, big, tf.ones_like(big))\n    a = a / safe\n    total = tf.math.pow(a, p) + tf.math.pow(b / safe, p)\n    return tf.where(positive, a / tf.math.pow(total, 1.0 / p), tf.zeros_like(big))\n'

blocks = {}
debug_info = ''