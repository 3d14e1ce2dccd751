from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'helpers/_polygamma.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    pass
    yield 'def _polygamma(n, x):\n    """polygamma(n, x) = d**n/dx**n digamma(x) for an integer n >= 1. From 1e4 on, the asymptotic series (-1)**(n + 1) * (n - 1)! / x**n * (1 + n/(2x) + n(n + 1)/(12x**2) - n(n + 1)(n + 2)(n + 3)/(720x**4)), within 1e-16, where TF\'s flushes to 0 (polygamma(1, x) from x = 1e19 in float32, polygamma(2, x) from x = 1e13); elsewhere TF\'s. Below 0, the reflection (-1)**n * polygamma(n, 1 - x) - d**n/dx**n pi*cot(pi*x) (TF\'s float32 polygamma is wrong in sign and size below x = -5)."""\n    negative = x < 0\n    right = tf.where(negative, 1.0 - x, x)\n    far = right > 1e4\n    r = 1.0 / tf.where(far, right, tf.ones_like(x))\n    scale = -1.0 if n % 2 == 0 else 1.0\n    for k in range(2, n):\n        scale *= k\n    tail = 1.0 + r * (n / 2 + r * (n * (n + 1) / 12 - tf.math.square(r) * (n * (n + 1) * (n + 2) * (n + 3) / 720)))\n    near = tf.math.polygamma(tf.constant(float(n), x.dtype), tf.where(far, tf.ones_like(x), right))\n    value = tf.where(far, scale * tf.math.pow(r, float(n)) * tail, near)\n    p = _cot_slope(n)\n    c = _cot_pi(x)\n    cot_slope = tf.zeros_like(c) + p[-1]\n    for coeff in reversed(p[:-1]):\n        cot_slope = cot_slope * c + coeff\n    reflected = (1.0 if n % 2 == 0 else -1.0) * value - 3.141592653589793 ** (n + 1) * cot_slope\n    return tf.where(negative, reflected, value)\n'

blocks = {}
debug_info = ''