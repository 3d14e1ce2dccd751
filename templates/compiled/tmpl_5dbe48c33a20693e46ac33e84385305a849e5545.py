from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_log1mexp.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _log1mexp(x):\n    """log(1 - exp(-x)) for x > 0: log(-expm1(-x)) below log(2), log1p(-exp(-x)) above (Maechler 2012)."""\n    small = x < 0.6931471805599453\n    x_small = tf.where(small, x, tf.ones_like(x))\n    x_large = tf.where(small, tf.ones_like(x), x)\n    return tf.where(small, tf.math.log(-tf.math.expm1(-x_small)), tf.math.log1p(-tf.math.exp(-x_large)))\n'

blocks = {}
debug_info = ''