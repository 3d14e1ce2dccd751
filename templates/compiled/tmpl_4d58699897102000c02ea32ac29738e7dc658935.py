from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_sinpi.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _sinpi(x):\n    """sin(pi*x): sin(pi*t), cos(pi*t), -sin(pi*t) or -cos(pi*t) as n mod 4 is 0, 1, 2 or 3 (_pi_reduced). 0 at every integer."""\n    s, c, k = _pi_reduced(x)\n    return tf.where(k == 0.0, s, tf.where(k == 1.0, c, tf.where(k == 2.0, -s, -c)))\n'

blocks = {}
debug_info = ''