from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_cot_slope.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _cot_slope(n):\n    """The coefficients (lowest degree first) of p with d**n/dx**n cot(pi*x) = pi**n * p(cot(pi*x)): p = c, then p <- -(1 + c**2) * p\', n times."""\n    p = [0.0, 1.0]\n    for _ in range(n):\n        slope = [k * p[k] for k in range(1, len(p))]\n        p = [0.0] * (len(slope) + 2)\n        for k, a in enumerate(slope):\n            p[k] -= a\n            p[k + 2] -= a\n    return p\n'

blocks = {}
debug_info = ''