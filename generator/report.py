"""A review report for the functions of `[tool.generator]`: report.md and one PNG per function.

Not a pipeline stage. For each function it generates the module (as `build`
would write it), imports it, and shows along the first variable (the others
held at a fixed value):

- f, f' and f'' of the generated module next to the mpmath reference, and
- the bits of error of the generated module and of naive TensorFlow autodiff
  (the expression as written, in tf ops) in float32, over the whole float range.

Metric, references and float formats come from `generator.measure`.
Needs TensorFlow and matplotlib (the `plots` extra); `build` and plain
generation never import this module.
Hands on: the path of report.md.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from generator import __version__
from generator.build import BUILD_COMMAND, generate_function
from generator.config import Config, FunctionConfig
from generator.errors import GeneratorError

REPORT = "report.md"
ORDERS = ("f", "f'", "f''")
COLUMN = {"generated": "tab:blue", "naive": "tab:orange", "reference": "black"}
# Values tried for the variables held fixed; the first that leaves the most of
# [-VALUE_RANGE, VALUE_RANGE] in the domain wins. 0.5 suits a probability, a
# scale and an offset alike.
HELD_CANDIDATES = (0.5, 2.0, -0.5, 10.0)
VALUE_RANGE = 8.0  # the values panels show x in [-8, 8]
DEFAULT_POINTS = 600
TICKS = (-1e30, -1e15, -1.0, 0.0, 1.0, 1e15, 1e30)  # for the symlog x axis of the error panels


@dataclass(frozen=True)
class Curve:
    """One function along its slice: inputs, and per order the reference and two results."""

    x: Any  # numpy float32 array, sorted
    reference: dict[str, Any]  # order label -> float32 array, NaN where not real and finite
    generated: dict[str, Any]
    naive: dict[str, Any]


@dataclass(frozen=True)
class Section:
    """What report.md says about one function."""

    function: FunctionConfig
    variables: tuple[str, ...]
    held: dict[str, float]
    image: str
    forms: str  # the generated module's docstring, up to its usage example
    up_to_date: bool | None  # whether the built file matches; None when not built
    rows: tuple[tuple[str, Any, Any], ...]  # (order label, generated Summary, naive Summary)


def write_report(config: Config, out: Path, names: Sequence[str] | None = None, points: int = DEFAULT_POINTS) -> Path:
    """Evaluate the chosen functions (default: all), write `out`/report.md and the plots."""
    functions = _choose(config, names)
    plt = _pyplot()
    tf = _tensorflow()
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    with tempfile.TemporaryDirectory(prefix="generator-report-") as scratch:
        for function in functions:
            source = generate_function(config, function)
            module = _load(source, function.name, Path(scratch))
            sections.append(_section(config, function, source, module, tf, plt, out, points))
    path = out / REPORT
    path.write_text(_markdown(config, sections, points), encoding="utf-8")
    return path


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise GeneratorError("the report needs matplotlib, an optional extra: pip install 'generator[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _tensorflow() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TF's C++ start-up chatter is noise here
    try:
        import tensorflow as tf
    except ImportError:
        raise GeneratorError(
            "the report evaluates the generated modules and needs TensorFlow: " "pip install 'generator[tensorflow]'"
        ) from None
    return tf


def _choose(config: Config, names: Sequence[str] | None) -> list[FunctionConfig]:
    if names is None:
        return list(config.functions)
    known = {f.name: f for f in config.functions}
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise GeneratorError(
            f"--functions: {', '.join(unknown)} not in {config.path}; known: {', '.join(sorted(known))}"
        )
    return [known[name] for name in sorted(set(names))]


def _load(source: str, name: str, directory: Path) -> ModuleType:
    from generator import measure

    return measure.load_module(source, f"report_{name}", directory)


def _section(
    config: Config,
    function: FunctionConfig,
    source: str,
    module: ModuleType,
    tf: Any,
    plt: Any,
    out: Path,
    points: int,
) -> Section:
    from generator import measure

    generated = getattr(module, function.name)
    variables = _variables(function)
    reference = measure.Reference(function.expr, variables, fmt=measure.FLOAT32, order=2, params=function.params)
    held = _held(reference, variables)
    naive_fn = measure.naive_function(function.expr, variables, "float32", function.params)
    curve = _curve(reference, generated, naive_fn, held, tf, points)
    image = f"{function.name}.png"
    _plot(plt, function, variables, held, curve).savefig(out / image, dpi=80)
    plt.close("all")
    rows = []
    for label in ORDERS:
        scores = [
            measure.score({label: results[label]}, {label: curve.reference[label]}, measure.FLOAT32)[label]
            for results in (curve.generated, curve.naive)
        ]
        rows.append((label, measure.summarize(scores[:1]), measure.summarize(scores[1:])))
    built = config.output / f"{function.name}.py"
    return Section(
        function=function,
        variables=variables,
        held=held,
        image=image,
        forms=(module.__doc__ or "").split("\nUsage:")[0].strip(),
        up_to_date=built.read_text(encoding="utf-8") == source if built.is_file() else None,
        rows=tuple(rows),
    )


def _variables(function: FunctionConfig) -> tuple[str, ...]:
    """The generated function's arguments, resolved as the pipeline resolves them."""
    from generator.derive import resolve_variables
    from generator.parse import parse

    from generator.parse import parameter_values

    names = list(function.variables) if function.variables is not None else None
    params = tuple(parameter_values(function.params))
    return tuple(s.name for s in resolve_variables(parse(function.expr), names, exclude=params))


def _held(reference: Any, variables: tuple[str, ...]) -> dict[str, float]:
    """Values for every variable but the first: the candidate that keeps most of the slice defined."""
    if len(variables) == 1:
        return {}
    probe = [VALUE_RANGE * (k / 8 - 1) for k in range(17)]

    def defined(value: float) -> int:
        return sum(reference.defined((x, *[value] * (len(variables) - 1))) for x in probe)

    best = max(HELD_CANDIDATES, key=defined)  # max keeps the first of equals
    return {v: best for v in variables[1:]}


def _grid(points: int) -> Any:
    """x across the whole float32 range: uniform in float ordinals (every binade gets its share),
    uniform in value over [-8, 8], and ladders into 1 and -1 (edges like logit's)."""
    import numpy as np

    from generator import measure

    fmt = measure.FLOAT32
    top = int(measure.ordinal(np.array([fmt.max], dtype=np.float32), fmt)[0])
    across = measure.from_ordinal(np.round(np.linspace(-top, top, points // 2)).astype(np.int64), fmt)
    moderate = np.linspace(-VALUE_RANGE, VALUE_RANGE, points // 2 + 1)
    ladders = [s * (1 - 2.0 ** -np.arange(1, 25)) for s in (1, -1)]
    grid = np.concatenate([across, moderate, *ladders, [0.0]]).astype(np.float32)
    return np.unique(grid[np.isfinite(grid)])


def _curve(
    reference: Any,
    generated: Callable[..., Any],
    naive: Callable[..., Any],
    held: dict[str, float],
    tf: Any,
    points: int,
) -> Curve:
    import numpy as np

    from generator import measure

    rest = tuple(held.values())
    x = np.array([v for v in _grid(points) if reference.defined((v, *rest))], dtype=np.float32)
    first = reference.variables[0]
    indices = {"f": (), "f'": (first,), "f''": (first, first)}
    references = {}
    for label, index in indices.items():
        values = [reference.value(index, (v, *rest)) for v in x]
        references[label] = np.array(
            [np.nan if v is None else measure.round_to_format(v, measure.FLOAT32) for v in values],
            dtype=np.float32,
        )
    return Curve(x, references, _along_first(generated, x, rest, tf), _along_first(naive, x, rest, tf))


def _along_first(fn: Callable[..., Any], x: Any, rest: tuple[float, ...], tf: Any) -> dict[str, Any]:
    """f, df/dx and d2f/dx2 by nested tapes; the held variables are constants."""
    import numpy as np

    inputs = tf.constant(x, dtype=tf.float32)
    held = [tf.constant(v, dtype=tf.float32) for v in rest]
    zero = tf.UnconnectedGradients.ZERO
    with tf.GradientTape() as outer:
        outer.watch(inputs)
        with tf.GradientTape() as inner:
            inner.watch(inputs)
            value = fn(inputs, *held) + tf.zeros_like(inputs)  # a constant f still has a value per x
        first = inner.gradient(value, inputs, unconnected_gradients=zero)
    second = outer.gradient(first, inputs, unconnected_gradients=zero)
    return {label: np.asarray(t, dtype=np.float32) for label, t in zip(ORDERS, (value, first, second))}


def _plot(
    plt: Any,
    function: FunctionConfig,
    variables: tuple[str, ...],
    held: dict[str, float],
    curve: Curve,
) -> Any:
    import numpy as np

    x = curve.x
    figure, axes = plt.subplots(2, 3, figsize=(15, 8))
    first = variables[0]
    where = "".join(f", {v} = {value:g}" for v, value in held.items())
    figure.suptitle(f"{function.name}: {function.expr}  (along {first}{where}; float32)")
    near = np.abs(x) <= VALUE_RANGE
    for column, label in enumerate(ORDERS):
        top, bottom = axes[0][column], axes[1][column]
        reference = curve.reference[label]
        top.plot(x[near], reference[near], "--", color=COLUMN["reference"], lw=1, label="mpmath")
        top.plot(
            x[near],
            curve.generated[label][near],
            color=COLUMN["generated"],
            lw=1.5,
            alpha=0.8,
            label="generated",
        )
        top.set_ylim(*_limits(reference[near]))
        top.set_title(f"{label} along {first}")
        top.grid(alpha=0.3)
        known = ~np.isnan(reference)
        for who in ("naive", "generated"):
            bits = _bits(getattr(curve, who)[label][known], reference[known])
            bottom.plot(
                x[known],
                bits,
                ".",
                ms=3,
                color=COLUMN[who],
                label=f"{who}: max {bits.max(initial=0):.0f}",
            )
        bottom.set_xscale("symlog", linthresh=1e-30, linscale=0.5)
        bottom.set_xticks(TICKS, [f"{t:g}" for t in TICKS])
        bottom.set_ylim(-1, 33)
        bottom.set_title(f"{label}: bits of error (NaN, wrong inf = 32)")
        bottom.set_xlabel(first)
        bottom.grid(alpha=0.3)
        bottom.legend(loc="center left", fontsize=8, framealpha=0.9)
    axes[0][0].legend(loc="best", fontsize=8)
    figure.tight_layout()
    return figure


def _bits(result: Any, reference: Any) -> Any:
    from generator import measure

    return measure.bits_of_error(result, reference, measure.FLOAT32)


def _limits(values: Any) -> tuple[float, float]:
    """y limits around the bulk of the reference, so one pole does not flatten the plot."""
    import numpy as np

    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return (-1.0, 1.0)
    lo, hi = np.percentile(finite, [2, 98])
    pad = 0.1 * (hi - lo) or 0.5 * max(abs(lo), 1.0)
    return (float(lo - pad), float(hi + pad))


def _markdown(config: Config, sections: list[Section], points: int) -> str:
    lines = [
        "# Review report",
        "",
        f"Written by `python -m generator report` (generator {__version__}) from `[tool.generator]` "
        f"in `{config.path.name}`. Each module is generated as `{BUILD_COMMAND}` writes it, "
        "imported, and evaluated in float32 along its first variable (other variables held fixed), "
        f"on about {points} points spread over the whole float32 range.",
        "",
        "- **Values**: f, f' and f'' of the generated module against the mpmath reference, for x in "
        f"[-{VALUE_RANGE:g}, {VALUE_RANGE:g}].",
        "- **Bits of error** (`generator.measure`): log2(1 + floats between the result and the correctly "
        "rounded true value); a NaN, or an infinity where the true value is finite, counts 32. "
        "*naive* is TensorFlow's autodiff of the expression as written.",
        "",
        "| function | expression | order | f (generated / naive, max bits) | f' | f'' |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in sections:
        cells = [f"{g.max_bits:.0f} / {n.max_bits:.0f}" for _, g, n in s.rows]
        lines.append(
            f"| [{s.function.name}](#{s.function.name}) | `{s.function.expr}` | {s.function.order} | "
            + " | ".join(cells)
            + " |"
        )
    for s in sections:
        lines += ["", f"## {s.function.name}", ""]
        held = ", ".join(f"{v} = {value:g}" for v, value in s.held.items())
        lines.append(
            f"`{s.function.expr}`, arguments ({', '.join(s.variables)}), custom gradients to order "
            f"{s.function.order}." + (f" Slice along {s.variables[0]} with {held}." if held else "")
        )
        if s.up_to_date is not None:
            built = config.output.name + "/" + f"{s.function.name}.py"
            state = "matches" if s.up_to_date else f"differs from (run `{BUILD_COMMAND}`)"
            lines.append(f"This module {state} `{built}`.")
        lines += ["", f"![{s.function.name}]({s.image})", ""]
        lines += [
            "| | generated max | mean | non-finite | naive max | mean | non-finite |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for label, g, n in s.rows:
            lines.append(
                f"| {label} | {g.max_bits:.1f} | {g.mean_bits:.2f} | {g.nonfinite} "
                f"| {n.max_bits:.1f} | {n.mean_bits:.2f} | {n.nonfinite} |"
            )
        lines += ["", "```text", s.forms, "```"]
    return "\n".join(lines) + "\n"
