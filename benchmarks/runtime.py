"""Runtime of generated modules against TensorFlow's own ops and autodiff.

For each function, the module generated at order 2 is timed against:

* a TF built-in (softplus vs tf.math.softplus, swish vs tf.nn.silu, gelu vs
  tf.nn.gelu(approximate=False), logaddexp vs a maximum/softplus formula and
  vs tf.reduce_logsumexp, xlogx vs tf.math.xlogy(x, x)): target
  generated / built-in <= 1.05;
* for composites (mish, gelu_tanh), TF autodiff of the naive expression
  written with tf ops: target generated / naive <= 1.0 (an idiomatic TF
  version and, for gelu_tanh, tf.nn.gelu(approximate=True) are shown too).

Three modes, each one `tf.function` (with and without `jit_compile=True`) on
float32 tensors of 2**20 elements on the CPU:

* forward:  f(x)
* first:    f and df/dx, one GradientTape
* second:   f, df/dx and d/dx sum(df/dx), nested tapes

Timing: every contestant of one (function, mode, compiler) group is traced and
warmed up first, then the contestants run interleaved, in a rotating order,
for a number of rounds; each sample is the mean of a few back-to-back calls.
Reported are the median time per call and the median over rounds of the
per-round ratio generated / reference. The clock is the process's CPU time
(`time.process_time`), with TensorFlow on one intra-op and one inter-op
thread (--threads): on a shared machine the wall time of a call is mostly
time spent waiting for a core, and it varies by 2-3x from call to call,
whereas the CPU time is the work done and varies by a few percent. The wall-
clock ratio is reported beside it, as a check. With --threads 0 (TF's own
choice), CPU time sums the work of all threads, which is not latency.

Memory: TF's CPU allocator keeps statistics
(`tf.config.experimental.get_memory_info("CPU:0")`, which works on the CPU in
TF >= 2.13). For one call in "second" mode we reset the peak, and report the
peak bytes allocated during the call above what was live before it, in units
of one input tensor (4 MiB). It counts every buffer TF allocates: intermediates,
what the tapes keep for the backward pass, and the outputs (the same count for
every contestant), so it is the working set the function needs, without
Python's or the process's own memory. XLA's buffers come from the same
allocator.

Before timing, each group checks that generated and reference agree on the
benchmark inputs (relative to the output's scale), so that the speed of a
wrong answer is never reported.

Usage:
    .venv/bin/python benchmarks/runtime.py                 # full run, a few minutes
    .venv/bin/python benchmarks/runtime.py --quick         # fewer rounds
    .venv/bin/python benchmarks/runtime.py --functions softplus,mish --jit off
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The memory statistics need TF's BFC allocator on the CPU; without it (the default of
# some TF 2.21 builds) reset_memory_stats("CPU:0") raises ValueError.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results" / "runtime.md"
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks._report import commit_note, shown_argv, table  # noqa: E402

MODES = ("forward", "first", "second")
TARGET_BUILTIN = 1.05
TARGET_NAIVE = 1.0
AGREEMENT = 1e-3  # max |generated - reference| / max(1, max |reference|), per output


@dataclass(frozen=True)
class Reference:
    label: str  # as printed in the tables
    kind: str  # "builtin", "naive" (the target applies), or "info" (shown for context)
    build: Callable  # tf -> callable(*inputs)


@dataclass(frozen=True)
class Case:
    name: str
    expression: str
    variables: tuple[str, ...]
    domain: tuple[float, float]  # inputs are uniform on this interval
    references: tuple[Reference, ...]


def _logaddexp_max(tf):
    return lambda x, y: tf.math.maximum(x, y) + tf.math.softplus(-tf.math.abs(x - y))


def _logaddexp_lse(tf):
    return lambda x, y: tf.math.reduce_logsumexp(tf.stack([x, y]), axis=0)


def _mish_naive(tf):
    return lambda x: x * tf.math.tanh(tf.math.log(1.0 + tf.math.exp(x)))


def _mish_idiomatic(tf):
    return lambda x: x * tf.math.tanh(tf.math.softplus(x))


def _gelu_tanh_naive(tf):
    c = (2.0 / 3.141592653589793) ** 0.5
    return lambda x: x * (1.0 + tf.math.tanh(c * (x + 0.044715 * x**3))) / 2.0


CASES: tuple[Case, ...] = (
    Case(
        "softplus",
        "log(1 + exp(x))",
        ("x",),
        (-20.0, 20.0),
        (Reference("tf.math.softplus", "builtin", lambda tf: tf.math.softplus),),
    ),
    Case(
        "swish",
        "x/(1 + exp(-x))",
        ("x",),
        (-20.0, 20.0),
        (Reference("tf.nn.silu", "builtin", lambda tf: tf.nn.silu),),
    ),
    Case(
        "gelu",
        "x*(1 + erf(x/sqrt(2)))/2",
        ("x",),
        (-8.0, 8.0),
        (Reference("tf.nn.gelu(approximate=False)", "builtin", lambda tf: lambda x: tf.nn.gelu(x, approximate=False)),),
    ),
    Case(
        "logaddexp",
        "log(exp(x) + exp(y))",
        ("x", "y"),
        (-20.0, 20.0),
        (
            Reference("max(x,y) + softplus(-|x-y|)", "builtin", _logaddexp_max),
            Reference("reduce_logsumexp(stack([x,y]))", "builtin", _logaddexp_lse),
        ),
    ),
    Case(
        "xlogx",
        "x*log(x)",
        ("x",),
        (0.001, 10.0),
        (Reference("tf.math.xlogy(x, x)", "builtin", lambda tf: lambda x: tf.math.xlogy(x, x)),),
    ),
    Case(
        "mish",
        "x*tanh(log(1 + exp(x)))",
        ("x",),
        (-8.0, 8.0),
        (
            Reference("naive x*tanh(log(1+exp(x)))", "naive", _mish_naive),
            Reference("x*tanh(softplus(x))", "info", _mish_idiomatic),
        ),
    ),
    Case(
        "gelu_tanh",
        "x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x**3)))/2",
        ("x",),
        (-8.0, 8.0),
        (
            Reference("naive x*(1+tanh(c*(x+0.044715x^3)))/2", "naive", _gelu_tanh_naive),
            Reference("tf.nn.gelu(approximate=True)", "info", lambda tf: lambda x: tf.nn.gelu(x, approximate=True)),
        ),
    ),
)


# --- building contestants ---------------------------------------------------------


# --option NAME: a Spec flag, for the run time an opt-in option costs.
OPTIONS = ("float64_inside", "accurate_roots", "compensated_arguments", "scaled_tails", "precise_sigmoid")


def load_generated(case: Case, workdir: Path, options: Sequence[str] = ()) -> Callable:
    """Generate the case's module at order 2 (with the Spec flags `options` set), import it,
    return its function."""
    from generator import Spec, generate

    name = f"gen_{case.name}"  # a name no module-level helper can have
    source = generate(Spec(case.expression, name, case.variables, 2, **{option: True for option in options}))
    path = workdir / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def make_mode(tf, f: Callable, mode: str) -> Callable:
    """The computation a mode times, as a plain Python function of the inputs."""
    if mode == "forward":
        return lambda *xs: (f(*xs),)
    if mode == "first":

        def first(*xs):
            with tf.GradientTape() as tape:
                tape.watch(xs)
                y = f(*xs)
            return (y, *tape.gradient(y, xs))

        return first

    def second(*xs):
        with tf.GradientTape() as outer:
            outer.watch(xs)
            with tf.GradientTape() as inner:
                inner.watch(xs)
                y = f(*xs)
            grads = inner.gradient(y, xs)
            total = tf.add_n([tf.reduce_sum(g) for g in grads])
        return (y, *grads, *outer.gradient(total, xs))

    return second


# --- measuring --------------------------------------------------------------------------


@dataclass
class Group:
    """One (function, mode, compiler) comparison."""

    case: str
    mode: str
    jit: bool
    contestants: list[str]  # "generated" first, then reference labels
    cpu: dict[str, list[float]] = field(default_factory=dict)  # process CPU seconds per call, one per round
    wall: dict[str, list[float]] = field(default_factory=dict)  # wall seconds per call, one per round
    peak_bytes: dict[str, int] = field(default_factory=dict)
    disagreement: dict[str, float] = field(default_factory=dict)

    def median(self, who: str, clock: str = "cpu") -> float:
        return statistics.median(getattr(self, clock)[who])

    def ratio(self, who: str, clock: str = "cpu") -> float:
        """Median over rounds of generated / `who` in the same round."""
        samples = getattr(self, clock)
        return statistics.median(g / r for g, r in zip(samples["generated"], samples[who]))


def disagreement(a: Sequence, b: Sequence) -> float:
    worst = 0.0
    for x, y in zip(a, b):
        x, y = x.numpy(), y.numpy()
        scale = max(1.0, float(abs(y).max()))
        worst = max(worst, float(abs(x - y).max()) / scale)
    return worst


def peak_bytes(tf, fn: Callable, inputs: Sequence) -> int:
    """Peak bytes TF's CPU allocator holds during one call, above what was live before it."""
    gc.collect()
    tf.config.experimental.reset_memory_stats("CPU:0")
    before = tf.config.experimental.get_memory_info("CPU:0")["current"]
    out = fn(*inputs)
    peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
    del out
    return peak - before


def run_group(tf, case: Case, generated: Callable, mode: str, jit: bool, inputs, args) -> Group:
    funcs: dict[str, Callable] = {"generated": tf.function(make_mode(tf, generated, mode), jit_compile=jit)}
    for ref in case.references:
        funcs[ref.label] = tf.function(make_mode(tf, ref.build(tf), mode), jit_compile=jit)
    group = Group(case.name, mode, jit, list(funcs))
    outputs = {who: fn(*inputs) for who, fn in funcs.items()}  # trace and compile
    for who in group.contestants[1:]:
        group.disagreement[who] = disagreement(outputs["generated"], outputs[who])
    del outputs
    for fn in funcs.values():  # warm up
        for _ in range(args.warmup):
            fn(*inputs)
    if mode == "second" or args.memory_all_modes:
        for who, fn in funcs.items():
            group.peak_bytes[who] = peak_bytes(tf, fn, inputs)
    group.cpu = {who: [] for who in funcs}
    group.wall = {who: [] for who in funcs}
    names = group.contestants
    for round_ in range(args.rounds):
        shift = round_ % len(names)
        for who in names[shift:] + names[:shift]:
            fn = funcs[who]
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(args.calls):
                fn(*inputs)
            group.cpu[who].append((time.process_time() - cpu) / args.calls)
            group.wall[who].append((time.perf_counter() - wall) / args.calls)
    return group


# (label, function of x on (-8, 8) and p = |x| + 0.5): what one op costs, to explain the
# ratios above and to price candidate forms. The exp-based rows are alternatives to
# tf.math.cosh/sinh and 1/cosh**2 that the generator could print.
OPS: tuple[tuple[str, Callable], ...] = (
    ("x + 1", lambda tf, x, p: x + 1.0),
    ("x * x", lambda tf, x, p: x * x),
    ("1 / p", lambda tf, x, p: 1.0 / p),
    ("tf.where(x > 0, x, p)", lambda tf, x, p: tf.where(x > 0.0, x, p)),
    ("exp", lambda tf, x, p: tf.math.exp(x)),
    ("expm1", lambda tf, x, p: tf.math.expm1(x)),
    ("log", lambda tf, x, p: tf.math.log(p)),
    ("log1p", lambda tf, x, p: tf.math.log1p(p)),
    ("sqrt", lambda tf, x, p: tf.math.sqrt(p)),
    ("tanh", lambda tf, x, p: tf.math.tanh(x)),
    ("sigmoid", lambda tf, x, p: tf.math.sigmoid(x)),
    ("softplus", lambda tf, x, p: tf.math.softplus(x)),
    ("erf", lambda tf, x, p: tf.math.erf(x)),
    ("erfc", lambda tf, x, p: tf.math.erfc(x)),
    ("cosh", lambda tf, x, p: tf.math.cosh(x)),
    ("sinh", lambda tf, x, p: tf.math.sinh(x)),
    ("0.5*(exp(x) + exp(-x))  [cosh]", lambda tf, x, p: 0.5 * (tf.math.exp(x) + tf.math.exp(-x))),
    ("0.5*(expm1(x) - expm1(-x))  [sinh]", lambda tf, x, p: 0.5 * (tf.math.expm1(x) - tf.math.expm1(-x))),
    ("1/cosh(x)**2", lambda tf, x, p: 1.0 / tf.math.square(tf.math.cosh(x))),
    ("4e/(1+e)**2, e = exp(-2|x|)  [sech**2]", lambda tf, x, p: _sech2(tf, x)),
)


def _sech2(tf, x):
    e = tf.math.exp(-2.0 * tf.math.abs(x))
    return 4.0 * e / tf.math.square(1.0 + e)


def op_costs(tf, jits: Sequence[bool], args) -> dict[bool, dict[str, list[float]]]:
    """CPU seconds per call of each op alone, interleaved rounds, per compiler."""
    x = tf.random.uniform([args.size], -8.0, 8.0, dtype=tf.float32, seed=7)
    p = tf.math.abs(x) + 0.5
    result: dict[bool, dict[str, list[float]]] = {}
    for jit in jits:
        funcs = {label: tf.function(lambda x, p, op=op: op(tf, x, p), jit_compile=jit) for label, op in OPS}
        for fn in funcs.values():
            for _ in range(1 + args.warmup):
                fn(x, p)
        samples: dict[str, list[float]] = {label: [] for label in funcs}
        labels = list(funcs)
        for round_ in range(args.rounds):
            shift = round_ % len(labels)
            for label in labels[shift:] + labels[:shift]:
                cpu = time.process_time()
                for _ in range(args.calls):
                    funcs[label](x, p)
                samples[label].append((time.process_time() - cpu) / args.calls)
        result[jit] = samples
    return result


# --- report -----------------------------------------------------------------------------


def target_of(case: Case, label: str) -> float | None:
    kind = next(r.kind for r in case.references if r.label == label)
    return {"builtin": TARGET_BUILTIN, "naive": TARGET_NAIVE}.get(kind)


def environment_note(tf, args) -> str:
    load = os.getloadavg()
    return (
        f"TensorFlow {tf.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs "
        f"(TF intra-op threads: {args.threads}), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start; "
        f"{args.size:,} float32 elements per input; {args.rounds} rounds x {args.calls} calls; "
        f"{commit_note()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}."
    )


def report(groups: list[Group], cases: dict[str, Case], ops: dict, args, env_note: str, elapsed: float) -> str:
    parts = ["# Runtime of generated modules\n"]
    parts.append(f"Produced by `{' '.join(['python benchmarks/runtime.py', *args.argv])}` in {elapsed:.0f} s.\n")
    parts.append(env_note + "\n")
    jits = sorted({g.jit for g in groups})
    by_key = {(g.case, g.mode, g.jit): g for g in groups}

    parts.append("## Time\n")
    parts.append(
        "CPU ms per call (median over rounds), and the median over rounds of the paired ratio "
        "generated / reference in CPU time (below 1: the generated module is faster); `wall` is the same "
        "ratio in wall-clock time, noisier on a loaded machine. `graph` is `tf.function`, `XLA` is "
        "`tf.function(jit_compile=True)`. Target: <= 1.05 against a built-in, <= 1.0 against the naive "
        "expression's autodiff; rows marked `info` have no target.\n"
    )
    header = ["function", "reference", "mode"]
    for jit in jits:
        tag = "XLA" if jit else "graph"
        header += [f"{tag} gen ms", f"{tag} ref ms", f"{tag} ratio", f"{tag} wall"]
    header.append("target")
    rows = []
    verdicts: list[tuple[str, str, str, bool, float, bool]] = []
    for case_name, case in cases.items():
        for ref in case.references:
            for mode in args.modes:
                row = [case_name, ref.label, mode]
                target = target_of(case, ref.label)
                for jit in jits:
                    g = by_key.get((case_name, mode, jit))
                    if g is None:
                        row += ["-", "-", "-", "-"]
                        continue
                    ratio = g.ratio(ref.label)
                    mark = "" if target is None or ratio <= target else " !"
                    row += [
                        f"{g.median('generated') * 1e3:.2f}",
                        f"{g.median(ref.label) * 1e3:.2f}",
                        f"{ratio:.2f}{mark}",
                        f"{g.ratio(ref.label, 'wall'):.2f}",
                    ]
                    if target is not None:
                        verdicts.append((case_name, ref.label, mode, jit, ratio, ratio <= target))
                row.append(f"<= {target:.2f}" if target is not None else "info")
                rows.append(row)
    parts.append(table(header, rows) + "\n")
    passed = sum(v[-1] for v in verdicts)
    parts.append(f"Targets met: **{passed} of {len(verdicts)}** comparisons (`!` marks a miss).\n")
    misses = [v for v in verdicts if not v[-1]]
    if misses:
        parts.append(
            "Misses: "
            + "; ".join(f"{c} vs {r}, {m}, {'XLA' if j else 'graph'}: {x:.2f}" for c, r, m, j, x, _ in misses)
            + ".\n"
        )

    mem_rows = []
    for case_name, case in cases.items():
        for ref in case.references:
            for jit in jits:
                g = by_key.get((case_name, "second", jit))
                if g is None or not g.peak_bytes:
                    continue
                unit = 4 * args.size  # bytes of one float32 input tensor
                gen_b, ref_b = g.peak_bytes["generated"], g.peak_bytes[ref.label]
                mem_rows.append(
                    [
                        case_name,
                        ref.label,
                        "XLA" if jit else "graph",
                        f"{gen_b / 2**20:.1f} ({gen_b / unit:.1f})",
                        f"{ref_b / 2**20:.1f} ({ref_b / unit:.1f})",
                        f"{gen_b / ref_b:.2f}" if ref_b else "-",
                    ]
                )
    if mem_rows:
        parts.append("## Peak memory, forward + first + second\n")
        parts.append(
            "Peak bytes held by TF's CPU allocator during one call, above what was live before it, in MiB "
            "(and in input-sized tensors). Includes the outputs, which every contestant returns alike "
            "(1 + 2n outputs for n inputs: f, the n first partials, the n gradients of their sum).\n"
        )
        parts.append(table(["function", "reference", "compiler", "generated", "reference", "ratio"], mem_rows) + "\n")

    bad = [(g, who, d) for g in groups for who, d in g.disagreement.items() if d > AGREEMENT]
    if ops:
        parts.append("## Cost of single ops\n")
        parts.append(
            "CPU ms per call of one op on the same number of float32 elements (x uniform on (-8, 8), p = |x| + 0.5), "
            "and its median paired ratio to `exp` in the same round. The bracketed rows compute cosh, sinh and "
            "1/cosh**2 from exp, as the generator could print them.\n"
        )
        header = ["op"]
        for jit in sorted(ops):
            tag = "XLA" if jit else "graph"
            header += [f"{tag} ms", f"{tag} / exp"]
        rows = []
        for label, _ in OPS:
            row = [f"`{label}`"]
            for jit in sorted(ops):
                samples = ops[jit]
                ratio = statistics.median(a / b for a, b in zip(samples[label], samples["exp"]))
                row += [f"{statistics.median(samples[label]) * 1e3:.2f}", f"{ratio:.2f}"]
            rows.append(row)
        parts.append(table(header, rows) + "\n")

    parts.append("## Agreement\n")
    if bad:
        parts.append(
            "Generated and reference disagree beyond the tolerance here (timings above still measured):\n\n"
            + "\n".join(f"- {g.case} vs {who}, {g.mode}, {'XLA' if g.jit else 'graph'}: {d:.2e}" for g, who, d in bad)
            + "\n"
        )
    else:
        worst = max((d for g in groups for d in g.disagreement.values()), default=0.0)
        parts.append(
            f"Every output of every group agrees with its reference to {worst:.1e} "
            f"(max |generated - reference| / max(1, max |reference|); tolerance {AGREEMENT:g}).\n"
        )
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and calls")
    parser.add_argument("--functions", help=f"comma-separated subset of: {', '.join(c.name for c in CASES)}")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of: %(default)s")
    parser.add_argument("--jit", choices=["both", "on", "off"], default="both", help="XLA compilation (default both)")
    parser.add_argument("--size", type=int, default=2**20, help="elements per input (default %(default)s)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per group (default 15, 5 with --quick)")
    parser.add_argument("--calls", type=int, help="back-to-back calls per sample (default 3, 1 with --quick)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls per contestant after tracing")
    parser.add_argument("--threads", type=int, default=1, help="TF intra-op threads (default 1; 0 lets TF choose)")
    parser.add_argument("--memory-all-modes", action="store_true", help="measure peak memory in every mode")
    parser.add_argument("--no-ops", action="store_true", help="skip the table of single-op costs")
    parser.add_argument("--output", type=Path, default=RESULTS, help="markdown file to write (default: %(default)s)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        choices=[o.replace("_", "-") for o in OPTIONS],
        help="generate with this opt-in option (repeatable), to measure what it costs",
    )
    args = parser.parse_args(argv)
    args.argv = shown_argv(argv)
    args.rounds = args.rounds or (5 if args.quick else 15)
    args.calls = args.calls or (1 if args.quick else 3)
    args.modes = [m.strip() for m in args.modes.split(",")]
    if unknown := sorted(set(args.modes) - set(MODES)):
        parser.error(f"unknown mode(s) {', '.join(unknown)}")
    cases = {c.name: c for c in CASES}
    if args.functions:
        wanted = [n.strip() for n in args.functions.split(",")]
        if unknown := sorted(set(wanted) - set(cases)):
            parser.error(f"unknown function(s) {', '.join(unknown)}; known: {', '.join(cases)}")
        cases = {n: cases[n] for n in wanted}

    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    except RuntimeError:
        # TF already ran something in this process (the smoke test imports us): keep its threads, say so.
        args.threads = f"{tf.config.threading.get_intra_op_parallelism_threads()} (could not be changed)"
    tf.random.set_seed(0)
    env_note = environment_note(tf, args)
    jits = {"both": [False, True], "on": [True], "off": [False]}[args.jit]

    started = time.perf_counter()
    groups: list[Group] = []
    with tempfile.TemporaryDirectory(prefix="generator-bench-") as tmp:
        for case in cases.values():
            generated = load_generated(case, Path(tmp), [o.replace("-", "_") for o in args.option])
            low, high = case.domain
            with tf.device("/CPU:0"):
                inputs = [
                    tf.random.uniform([args.size], low, high, dtype=tf.float32, seed=i)
                    for i in range(len(case.variables))
                ]
                for jit in jits:
                    for mode in args.modes:
                        group = run_group(tf, case, generated, mode, jit, inputs, args)
                        groups.append(group)
                        summary = ", ".join(f"{who}: {group.ratio(who):.2f}" for who in group.contestants[1:])
                        print(
                            f"  {case.name:10s} {'XLA' if jit else 'graph':5s} {mode:7s} "
                            f"gen {group.median('generated') * 1e3:7.2f} CPU ms; gen/ref {summary}",
                            file=sys.stderr,
                            flush=True,
                        )
    with tf.device("/CPU:0"):
        ops = {} if args.no_ops else op_costs(tf, jits, args)
    text = report(groups, cases, ops, args, env_note, time.perf_counter() - started)
    print(text)
    if not args.no_write:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
