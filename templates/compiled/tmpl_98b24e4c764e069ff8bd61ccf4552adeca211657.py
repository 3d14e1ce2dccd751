from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_pnorm_ratio_power.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _pnorm_ratio_power(a, b, p, q):\n    """(|a| / (|a|**p + |b|**p)**(1/p))**q for q >= 1: |a| and |b| scaled by the larger magnitude, so that neither the powers nor the norm overflow; where the ratio flushes to 0, so does its power; 0 at a = b = 0."""\n    a = tf.math.abs(a)\n    b = tf.math.abs(b)\n    big = tf.math.maximum(a, b)\n    positive = big > 0\n    safe = tf.where(positive, big, tf.ones_like(big))\n    ratio = a / safe\n    total = tf.math.pow(ratio, p) + tf.math.pow(b / safe, p)\n    return tf.where(positive, tf.math.pow(ratio, q) / tf.math.pow(total, q / p), tf.zeros_like(big))\n'

blocks = {}
debug_info = ''