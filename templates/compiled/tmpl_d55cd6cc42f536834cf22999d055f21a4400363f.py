from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_lgamma_diff.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _lgamma_diff(y, x):\n    """lgamma(y) - lgamma(y + x), which cancels where x is small beside y (lgamma(3e9) - lgamma(3e9 + 0.75) is -16.4; the difference as written is 0 in float32; lgamma(2.5) - lgamma(2.5 + 1e-6) is -7.0e-7, 18 bits off). Where y and z = y + x are >= 10, Stirling\'s series (_lgamma_stirling_gap). Where both are > 0 and |x| <= 1, the same at y + 10 after lgamma(w) = lgamma(w + 10) - log(w) - ... - log(w + 9), the logs\' differences as log1p(x/(y + j)), if its error bound, |x|*(4 + log(y + 10)) + |log1p(x/y)|, is below the difference\'s, |lgamma(y)| + |lgamma(z)| + |z*digamma(z)|, the last for the rounding of z (-lgamma(1 + x) = lgamma_diff(1, x) near x = 0, where 1 + x rounds and the difference was 0 for |x| < 6e-8 in float32). Elsewhere the difference as written."""\n    z = y + x\n    big = (y >= 10.0) & (z >= 10.0)\n    y_naive = tf.where(big, tf.ones_like(y), y)\n    z_naive = tf.where(big, tf.ones_like(z), z)\n    lgamma_y = tf.math.lgamma(y_naive)\n    lgamma_z = tf.math.lgamma(z_naive)\n    eligible = (y > 0.0) & (z > 0.0) & (tf.math.abs(x) <= 1.0) & ~big\n    ye = tf.where(eligible, y, tf.ones_like(y))\n    xe = tf.where(eligible, x, tf.zeros_like(x))\n    bound = tf.math.abs(xe) * (4.0 + tf.math.log(ye + 10.0)) + tf.math.abs(tf.math.log1p(xe / ye))\n    ze = ye + xe\n    plain = tf.math.abs(lgamma_y) + tf.math.abs(lgamma_z) + tf.math.abs(ze * tf.math.digamma(ze))\n    near = eligible & (bound < plain)\n    stirling = big | near\n    ten = tf.fill(tf.shape(y), tf.constant(10.0, y.dtype))\n    ys = tf.where(stirling, y, ten)\n    xs = tf.where(stirling, x, tf.zeros_like(x))\n    value = _lgamma_stirling_gap(tf.where(near, ys + 10.0, ys), xs)\n    yn = tf.where(near, y, tf.ones_like(y))\n    xn = tf.where(near, x, tf.zeros_like(x))\n    for j in range(10):\n        value = value + tf.math.log1p(xn / (yn + j))\n    return tf.where(stirling, value, lgamma_y - lgamma_z)\n'

blocks = {}
debug_info = ''