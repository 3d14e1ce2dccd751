from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_power_sums.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _power_sums(u, v, d):\n    """[h_0, ..., h_d], h_k = u**k + u**(k - 1)*v + ... + v**k: u**(k + 1) - v**(k + 1) = (u - v)*h_k, which does not cancel where u - v is known apart (for u = 1/y, v = 1/z, u - v = (z - y)*u*v) and u is near v."""\n    sums = [tf.ones_like(u)]\n    power = tf.ones_like(u)\n    for _ in range(d):\n        power = power * u\n        sums.append(v * sums[-1] + power)\n    return sums\n'

blocks = {}
debug_info = ''