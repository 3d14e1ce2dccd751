"""Accuracy benchmark: bits of error of f, f' and f'' against mpmath.

For each function of a suite TOML ([[function]] with name, expr, vars) and
each dtype, three approaches are scored at the same sample points against
the same references (see generator.measure for the metric, the references
and the sampling):

* generated: the module generated at order 2 (--order N: at order N, each order
  up to N scored);
* float64-inside: the same with --float64-inside (float32 only: float32 inputs
  computed in float64 and rounded once at the end);
* accurate: the same with --accurate-roots --compensated-arguments --scaled-tails
  --precise-sigmoid, the opt-in options that spend ops on the last bits in float32
  arithmetic;
* naive: TensorFlow autodiff of the naive expression, written with tf ops;
* builtin: a TensorFlow built-in, where one exists (BUILTINS below).

Prints a Markdown report and writes it to benchmarks/results/accuracy.md.
References are cached under benchmarks/.cache (keyed by everything they
depend on, including the source of generator/measure.py); --no-cache
recomputes them.

    .venv/bin/python benchmarks/accuracy.py
    .venv/bin/python benchmarks/accuracy.py --dtype float32 --functions softplus,mish --points 200
    .venv/bin/python benchmarks/accuracy.py --order 3 --dtype float32   # results/accuracy-order3.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from generator import Spec, generate, measure  # noqa: E402
from generator.derive import Index  # noqa: E402
from generator.pipeline import MAX_ORDER  # noqa: E402

SUITE = ROOT / "tests" / "functions.toml"
OUTPUT = ROOT / "benchmarks" / "results" / "accuracy.md"
CACHE = ROOT / "benchmarks" / ".cache"
ORDER = 2  # the default: the goal is f and every first and second partial
APPROACHES = ("generated", "float64-inside", "accurate", "naive", "builtin")


def order_label(order: int) -> str:
    """f, f', f'', f''', ..."""
    return "f" + "'" * order


def builtins() -> dict[str, Callable[..., object]]:
    """The TF built-in for a suite function, keyed by its name in the suite."""
    import tensorflow as tf

    return {
        "softplus": tf.math.softplus,
        "log_sigmoid": tf.math.log_sigmoid,
        "swish": tf.nn.silu,
        "gelu": lambda x: tf.nn.gelu(x, approximate=False),
        "gelu_tanh": lambda x: tf.nn.gelu(x, approximate=True),
        "logaddexp": lambda x, y: tf.reduce_logsumexp(tf.stack([x, y]), axis=0),
        "xlogx": lambda x: tf.math.xlogy(x, x),
        "bce_with_logits": lambda z, t: tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=z),
        "tanh_exp": tf.math.tanh,
        "elu_negative": tf.math.expm1,
    }


# --- references, cached ---------------------------------------------------------------


@dataclass(frozen=True)
class Samples:
    points: np.ndarray  # (points, variables), in the format's dtype
    reference: dict[Index, np.ndarray]  # correctly rounded; NaN where not real and finite
    unresolved: int  # values whose reference even the last precision could not bound


def _cache_key(case: measure.Case, fmt: measure.Format, points: int, order: int) -> str:
    sources = [ROOT / "generator" / name for name in ("measure.py", "parse.py", "primitives.py")]
    blob = json.dumps([case.expr, case.vars, fmt.name, points, order] + [p.read_text() for p in sources])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def reference_samples(
    case: measure.Case, fmt: measure.Format, points: int, cache: Path | None, order: int = ORDER
) -> Samples:
    """Sample points and the references there, for f and every partial up to `order`; from
    the cache when it holds them."""
    path = cache / f"{case.name}-{fmt.name}-{_cache_key(case, fmt, points, order)}.npz" if cache else None
    if path is not None and path.is_file():
        data = np.load(path)
        indices = measure.partial_indices(case.vars, order)
        return Samples(data["points"], {i: data[f"ref_{k}"] for k, i in enumerate(indices)}, int(data["unresolved"]))
    reference = measure.Reference(case.expr, case.vars, fmt, order)
    sample = measure.sample_points(reference, points)
    table = reference.table(sample)
    samples = Samples(sample, table, len(reference.unresolved))
    if path is not None:
        cache.mkdir(parents=True, exist_ok=True)
        arrays = {f"ref_{k}": table[i] for k, i in enumerate(reference.indices)}
        np.savez(path, points=sample, unresolved=samples.unresolved, **arrays)
    return samples


# --- scoring ------------------------------------------------------------------------------


Scores = dict[Index, measure.Score]  # one approach on one function in one dtype


def evaluate(fn: Callable[..., object], case: measure.Case, samples: Samples, fmt: measure.Format) -> Scores:
    order = max(len(index) for index in samples.reference)
    results = measure.tf_partials(fn, samples.points, case.vars, fmt, order)
    return measure.score(results, samples.reference, fmt)


def summary(scores: Scores, order: int) -> measure.Summary:
    return measure.summarize(measure.by_order(scores, order))


@dataclass(frozen=True)
class Row:
    case: measure.Case
    fmt: measure.Format
    samples: Samples
    outcomes: dict[str, Scores]  # approach -> scores; no "builtin" key when there is none


def run(
    cases: Sequence[measure.Case],
    formats: Sequence[measure.Format],
    points: int,
    cache: Path | None,
    order: int = ORDER,
) -> list[Row]:
    table = builtins()
    with tempfile.TemporaryDirectory() as directory:
        generated, wide, accurate = {}, {}, {}
        for case in cases:
            source = generate(Spec(case.expr, case.name, case.vars, order))
            generated[case.name] = getattr(measure.load_module(source, case.name, Path(directory)), case.name)
            source = generate(Spec(case.expr, case.name, case.vars, order, float64_inside=True))
            module = measure.load_module(source, f"{case.name}_float64_inside", Path(directory))
            wide[case.name] = getattr(module, case.name)
            options = {"accurate_roots": True, "compensated_arguments": True, "scaled_tails": True}
            options["precise_sigmoid"] = True
            source = generate(Spec(case.expr, case.name, case.vars, order, **options))
            module = measure.load_module(source, f"{case.name}_accurate", Path(directory))
            accurate[case.name] = getattr(module, case.name)
        rows = []
        for fmt in formats:
            for case in cases:
                started = time.perf_counter()
                samples = reference_samples(case, fmt, points, cache, order)
                functions = {
                    "generated": generated[case.name],
                    "accurate": accurate[case.name],
                    "naive": measure.naive_function(case.expr, case.vars, fmt.name),
                }
                if fmt.name == "float32":
                    functions["float64-inside"] = wide[case.name]
                if case.name in table:
                    functions["builtin"] = table[case.name]
                outcomes = {name: evaluate(fn, case, samples, fmt) for name, fn in functions.items()}
                rows.append(Row(case, fmt, samples, outcomes))
                seconds = time.perf_counter() - started
                print(f"  {fmt.name} {case.name}: {len(samples.points)} points, {seconds:.1f}s", file=sys.stderr)
    return rows


# --- the report ----------------------------------------------------------------------------


def _cell(summary: measure.Summary) -> str:
    return f"{summary.max_bits:.1f} / {summary.mean_bits:.2f} / {100 * summary.within:.1f}% / {summary.nonfinite}"


def _number(value: float, fmt: measure.Format) -> str:
    """The shortest decimal that reads back as this float of the format."""
    return str(fmt.dtype.type(value))


def _summary_lines(rows: Sequence[Row], approach: str, fmt: measure.Format, order: int) -> list[str]:
    mine = [r for r in rows if r.fmt == fmt and approach in r.outcomes]
    if not mine:
        return []
    broken = sum(1 for r in mine if any(s.nonfinite.any() for s in r.outcomes[approach].values()))
    pooled = []
    for k in range(order + 1):
        scores = [s for r in mine for s in measure.by_order(r.outcomes[approach], k)]
        pooled.append(measure.summarize(scores))
    labels = "/".join(order_label(k) for k in range(order + 1))
    within = "/".join(f"{100 * p.within:.1f}%" for p in pooled)
    mean = "/".join(f"{p.mean_bits:.2f}" for p in pooled)
    worst = "/".join(f"{p.max_bits:.0f}" for p in pooled)
    return [
        f"- **{approach}, {fmt.name}**: functions with NaN/inf where the true value is finite: "
        f"{broken} of {len(mine)}; points within 3 bits {labels}: {within}; mean bits {labels}: {mean}; "
        f"max bits {labels}: {worst}"
    ]


def misses(scores: Scores, order: int) -> list[measure.Score]:
    """The partials of this order that miss the goal (see measure.Summary.meets_goal)."""
    return [s for s in measure.by_order(scores, order) if not measure.summarize([s]).meets_goal()]


def _worst_points(row: Row, order: int, count: int = 3) -> list[str]:
    lines = []
    for score in misses(row.outcomes["generated"], order):
        summary = measure.summarize([score])
        label = "f" if not score.index else "d" + "d".join(score.index)
        lines.append(f"- `{label}`: {summary.line()}")
        for i in score.worst(count):
            at = ", ".join(f"{v}={_number(p, row.fmt)}" for v, p in zip(row.case.vars, row.samples.points[i]))
            lines.append(
                f"  - at {at}: ours {_number(score.result[i], row.fmt)}, "
                f"true {_number(score.reference[i], row.fmt)} ({score.bits[i]:.1f} bits)"
            )
    return lines


def report(rows: Sequence[Row], command: str, points: int, order: int = ORDER) -> str:
    formats = list(dict.fromkeys(r.fmt for r in rows))
    out = [
        "# Accuracy against mpmath",
        "",
        f"Written by `{command}`. Bits of error as in Herbie: log2(1 + the number of floats between the result "
        "and the correctly rounded true value), in the dtype with subnormals flushed to zero as TensorFlow on "
        "CPU does; NaN, or an infinity where the true value is finite, counts as the full width (32 or 64 bits). "
        "True values: SymPy derivatives of the naive expression, evaluated by mpmath in interval arithmetic "
        "until they round alike (`generator/measure.py`).",
        "",
        f"About {points} points per function and dtype, over the dtype's whole range (uniform in float "
        "ordinals, uniform in value over [-100, 100], ladders into domain edges, 0 and +-1), where the true f "
        "is real and finite. Values where a derivative is not (the kink of hypot at 0) are left out of that "
        "derivative's statistics. Orders pool every partial of that order (for gaussian_nll, f'' is six "
        "partials).",
        "",
        "## Summary",
        "",
    ]
    for fmt in formats:
        for approach in APPROACHES:
            out += _summary_lines(rows, approach, fmt, order)
    out += [
        "",
        "## Per function",
        "",
        "Each cell: max bits / mean bits / share within 3 bits / count of NaN or inf where the true value is finite.",
        "",
        "| function | dtype | order | points | generated | generated, --float64-inside | generated, --accurate-roots "
        "--compensated-arguments --scaled-tails --precise-sigmoid | naive autodiff | TF built-in |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for k in range(order + 1):
            cells = []
            for approach in APPROACHES:
                scores = row.outcomes.get(approach)
                cells.append(_cell(summary(scores, k)) if scores is not None else "-")
            note = f" ({row.samples.unresolved} unresolved)" if row.samples.unresolved and k == 0 else ""
            out.append(
                f"| {row.case.name} | {row.fmt.name} | {order_label(k)} | {len(row.samples.points)}{note} | "
                + " | ".join(cells)
                + " |"
            )
    out += [
        "",
        "## Where the generated module misses the goal",
        "",
        "Goal, per partial: no NaN or inf where the true value is finite, at least "
        f"{100 * measure.GOAL_WITHIN:g}% of points within 3 bits, mean at most {measure.GOAL_MEAN:g} bits. "
        "Each failing partial with its three worst points (ours vs the correctly rounded true value).",
        "",
    ]
    for row in rows:
        for k in range(order + 1):
            lines = _worst_points(row, k)
            if lines:
                out += [f"### {row.case.name}, {row.fmt.name}, {order_label(k)}", "", *lines, ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=SUITE, help="suite TOML (default: tests/functions.toml)")
    parser.add_argument("--dtype", default="float32,float64", help="comma-separated: float32, float64")
    parser.add_argument("--functions", default="", help="comma-separated suite names (default: all)")
    parser.add_argument("--points", type=int, default=400, help="sample points per function and dtype")
    parser.add_argument(
        "--order", type=int, default=ORDER, help="generate at this order and score each order up to it (default: 2)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write the Markdown report (default: results/accuracy.md, results/accuracy-orderN.md)",
    )
    parser.add_argument("--no-cache", action="store_true", help="recompute references instead of using the cache")
    args = parser.parse_args(argv)

    cases = measure.load_suite(args.suite)
    if args.functions:
        wanted = args.functions.split(",")
        unknown = sorted(set(wanted) - {c.name for c in cases})
        if unknown:
            parser.error(f"not in {args.suite}: {', '.join(unknown)}")
        cases = [c for c in cases if c.name in wanted]
    try:
        formats = [measure.FORMATS[name] for name in args.dtype.split(",")]
    except KeyError as exc:
        parser.error(f"unknown dtype {exc}; use float32 and/or float64")
    if not 1 <= args.order <= MAX_ORDER:
        parser.error(f"--order must be between 1 and {MAX_ORDER}")
    output = args.output or (OUTPUT if args.order == ORDER else OUTPUT.with_name(f"accuracy-order{args.order}.md"))
    command = "python benchmarks/accuracy.py " + " ".join(argv if argv is not None else sys.argv[1:])
    rows = run(cases, formats, args.points, None if args.no_cache else CACHE, args.order)
    text = report(rows, command.strip(), args.points, args.order)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
