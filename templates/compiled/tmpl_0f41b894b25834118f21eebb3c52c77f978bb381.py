from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_logcosh.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _logcosh(x):\n    """log(cosh(x)): log1p(2*sinh(x/2)**2) for |x| < 1, |x| + log1p(exp(-2|x|)) - log(2) above."""\n    ax = tf.math.abs(x)\n    small = ax < 1.0\n    ax_small = tf.where(small, ax, tf.zeros_like(ax))\n    ax_large = tf.where(small, tf.ones_like(ax), ax)\n    near = tf.math.log1p(2.0 * tf.math.square(tf.math.sinh(0.5 * ax_small)))\n    far = ax_large + tf.math.log1p(tf.math.exp(-2.0 * ax_large)) - 0.6931471805599453\n    return tf.where(small, near, far)\n'

blocks = {}
debug_info = ''