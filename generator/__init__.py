"""generator: numerically stable, nested TensorFlow custom gradients from a math expression.

    parse -> derive (+ stabilize) -> emit (print + model) -> render -> format -> write

`generate(spec)` runs the pipeline and returns the module source. Importing
this package never imports TensorFlow.
"""

from __future__ import annotations

__version__ = "0.1.0"

from generator.pipeline import Spec, generate  # noqa: E402

__all__ = ["Spec", "generate", "__version__"]
