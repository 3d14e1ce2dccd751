from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_pnorm.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _pnorm(a, b, p):\n    """(|a|**p + |b|**p)**(1/p), the p-norm of (a, b), scaled by the larger magnitude so that the powers cannot overflow or flush to 0; 0 at a = b = 0, inf where a leg is."""\n    a = tf.math.abs(a)\n    b = tf.math.abs(b)\n    big = tf.math.maximum(a, b)\n    small = tf.math.minimum(a, b)\n    positive = big > 0\n    safe = tf.where(positive, big, tf.ones_like(big))\n    scale = tf.math.pow(1.0 + tf.math.pow(small / safe, p), 1.0 / p)\n    return tf.where(positive, safe * scale, tf.zeros_like(big))\n'

blocks = {}
debug_info = ''