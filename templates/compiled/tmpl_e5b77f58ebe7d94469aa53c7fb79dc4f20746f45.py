from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_split_halves.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _split_halves(u):\n    """u as high + low, each of 12 significant bits or fewer (float32; 26 and 27 in float64),\n    so that their products are exact: the high half by masking the low bits of u\'s significand."""\n    if u.dtype == tf.float64:\n        bits = tf.bitcast(u, tf.int64)\n        high = tf.bitcast(tf.bitwise.bitwise_and(bits, tf.constant(-(1 << 27), tf.int64)), tf.float64)\n    else:\n        bits = tf.bitcast(u, tf.int32)\n        high = tf.bitcast(tf.bitwise.bitwise_and(bits, tf.constant(-(1 << 12), tf.int32)), u.dtype)\n    return high, u - high\n'

blocks = {}
debug_info = ''