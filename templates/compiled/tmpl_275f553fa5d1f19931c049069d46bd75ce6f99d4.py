from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_split_power.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _split_power(u, hi, lo):\n    """u**(hi + lo) as pow(u, hi) * pow(u, lo): an exponent the dtype does not hold, in two parts of one sign. pow(u, hi + lo) would round the exponent, and its error times log(u) is the result\'s relative error (5 bits for u**0.9 at u = 1e38 in float32); pow(u, lo) is within 1e-5 of 1 for finite u, so the product over- or underflows only where the power does."""\n    return tf.math.pow(u, hi) * tf.math.pow(u, lo)\n'

blocks = {}
debug_info = ''