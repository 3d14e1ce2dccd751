"""Command line: `python -m generator EXPR [options]`, `... build` and `... report`.

The first argument picks the command: `build` and `report` are subcommands,
anything else is an expression. Exit status follows black: 0 success, 1 would
change (build --check), 2 bad input or arguments, 123 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from generator.errors import GeneratorError

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 123

EPILOG = """\
examples:
  python -m generator "log(1+exp(x))"
  python -m generator "log(1+exp(x))" --name softplus --order 3 -o softplus.py
  python -m generator "log(exp(x) + exp(y))" --vars y,x --name logaddexp
  python -m generator "log(1 + exp(beta*x))/beta" --param beta=10 --name smooth_relu
  python -m generator "where(abs(x) <= 1, x**2/2, abs(x) - 1/2)" --name huber

functions: exp log log1p expm1 log2 log10 sqrt sin cos tan sinh cosh tanh asin
acos atan atan2(a,b) asinh acosh atanh erf erfc abs sigmoid softplus log_sigmoid
logaddexp(a,b) log1mexp xlogy(a,b) xlog1py(a,b) hypot(a,b) lgamma digamma
lbeta(a,b) max(a,b) min(a,b)
where(cond,a,b) with cond made of < <= > >= == != and, or, not; constants: pi e

packages: python -m generator build --help, python -m generator report --help
"""

BUILD_DESCRIPTION = (
    "Generate one module per function listed in [tool.generator] of pyproject.toml, plus the "
    "package's __init__.py, and write the files that changed. The config is the first "
    "pyproject.toml with [tool.generator] in the working directory or a parent."
)

REPORT_DESCRIPTION = (
    "Write a review report (report.md and PNG plots) for the functions in [tool.generator]: "
    "f, f' and f'' of each generated module, and its bits of error next to naive TensorFlow "
    "autodiff, against an mpmath reference. Needs TensorFlow, mpmath and matplotlib."
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if "required: expression" in message:
            message += " (an expression that starts with '-' needs '--' before it: -- \"-x*log(x)\")"
        raise GeneratorError(message)


def _order(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--order must be an integer, got {text!r}") from None


def _name_list(option: str) -> Callable[[str], tuple[str, ...]]:
    def convert(text: str) -> tuple[str, ...]:
        names = tuple(part.strip() for part in text.split(","))
        if not text.strip() or any(not n for n in names):
            raise argparse.ArgumentTypeError(f"{option} must be a comma-separated list of names, got {text!r}")
        return names

    return convert


_vars = _name_list("--vars")


def _positive_int(option: str) -> Callable[[str], int]:
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{option} must be a positive integer, got {text!r}")
        return value

    return convert


def _param(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"--param must be NAME=VALUE, got {text!r}")
    try:
        number = float(value.strip().replace("_", "x"))  # float() would accept 1_000
    except ValueError:
        raise argparse.ArgumentTypeError(f"--param {name.strip()}: VALUE must be a number, got {value!r}") from None
    return name.strip(), number


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m generator",
        description=(
            "Generate a TensorFlow function with numerically stable, nested @tf.custom_gradient "
            "derivatives from a math expression. The module is printed to stdout, or written with -o."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("expression", help='the expression, e.g. "log(1+exp(x))" (Python syntax, whitelisted)')
    parser.add_argument("--name", help="name of the generated function (default: f)")
    parser.add_argument(
        "--vars",
        type=_vars,
        metavar="A,B,...",
        help="argument order of the generated function (default: the variables sorted by name)",
    )
    parser.add_argument(
        "--order",
        type=_order,
        default=2,
        help="highest derivative order served by custom gradients, 1 to 6 (default: 2)",
    )
    parser.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="make NAME a keyword-only argument with default VALUE, not differentiated (repeatable)",
    )
    parser.add_argument(
        "--float64-inside",
        action="store_true",
        help="compute float32 inputs in float64 and round once at the end: right to the last bit or two where "
        "float32 arithmetic is not (cancellation near roots, rounded arguments of steep functions, "
        "overflow inside), at 2.5-3 times the run time on the CPU",
    )
    parser.add_argument(
        "--accurate-roots",
        action="store_true",
        help="keep the relative accuracy of one-input forms near their nonzero roots, where their terms cancel "
        "(swish' loses 9 bits within 2**-10 of -1.278), with a Taylor polynomial there: a where and 10-30 "
        "more ops per form it applies to (swish' and swish'' take twice the run time in graph mode); and in a "
        "band where a form cancels between its series at 0 and far out (tanh(x)/x's f'' near |x| = 1), the "
        "Taylor polynomial around the band's middle",
    )
    parser.add_argument(
        "--compensated-arguments",
        action="store_true",
        help="correct exp, sigmoid, softplus and erfc by the rounding error of their argument (x - y, x**2/2, "
        "x/sqrt(2), x*(a + b*x**2): two-operand operations), computed exactly and carried to first order "
        "(logaddexp' loses 5 bits at x - y = -79 without it): 10-50 more ops per function (gelu with f' "
        "takes 2.6 times tf.nn.gelu's run time in graph mode, 1.9 times with XLA)",
    )
    parser.add_argument(
        "--scaled-tails",
        action="store_true",
        help="keep a product of sigmoid(u), sigmoid_slope(u) or tanh_softplus(u) with a larger factor a normal "
        "number where the decaying factor alone is subnormal, which TF flushes to 0 on the CPU (swish at "
        "x = -90 is -7.4e-38, not 0): the factor computed at u + 40 and the product scaled by exp(-40) where "
        "u < -80, 6 more ops per product (swish's forward pass takes 3.3 times tf.nn.silu's run time in graph mode)",
    )
    parser.add_argument(
        "--precise-sigmoid",
        action="store_true",
        help="compute sigmoid as e/(1 + e) below 0 and 1/(1 + e) above, e = exp(-|u|): within 2 ulps, where "
        "TF's sigmoid kernel is up to 5.7 ulps off below 0 (float32; swish'' mean error 0.56 -> 0.30 bits): "
        "7 more ops per sigmoid",
    )
    parser.add_argument(
        "--accurate",
        action="store_true",
        help="all four options that spend ops on the last bits in the inputs' own dtype: --accurate-roots "
        "--compensated-arguments --scaled-tails --precise-sigmoid (with them every function of the benchmark "
        "suite is within 3 bits at 99.5%% of points or more, at every order, in float32)",
    )
    parser.add_argument("-o", "--output", type=Path, metavar="PATH", help="write the module to PATH atomically")
    parser.add_argument(
        "--force", action="store_true", help="overwrite PATH even if it lacks the generated-file header"
    )
    return parser


def build_build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m generator build", description=BUILD_DESCRIPTION)
    parser.add_argument("--config", type=Path, metavar="PATH", help="the pyproject.toml to read")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    parser.add_argument("--diff", action="store_true", help="write nothing; print unified diffs")
    parser.add_argument(
        "--jobs",
        type=_positive_int("--jobs"),
        default=os.cpu_count() or 1,
        metavar="N",
        help="generate in N processes (default: one per CPU, here %(default)s); the output is the same",
    )
    return parser


def build_report_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m generator report", description=REPORT_DESCRIPTION)
    parser.add_argument("--config", type=Path, metavar="PATH", help="the pyproject.toml to read")
    parser.add_argument(
        "--out", type=Path, default=Path("report"), metavar="DIR", help="output directory (default: report)"
    )
    parser.add_argument(
        "--functions", type=_name_list("--functions"), metavar="A,B,...", help="report only some functions"
    )
    return parser


def _load_numpy() -> None:
    """Load NumPy, which generation measures with, without OpenBLAS's thread pool.

    Generation's NumPy work is elementwise and never calls BLAS, but OpenBLAS, loaded
    with NumPy, starts a thread per core that spins a while waiting for matrix products:
    on a loaded 2-CPU machine about 50 ms of a `python -m generator` run (benchmarks/latency.py).
    With OPENBLAS_NUM_THREADS=1 it starts none. A process that already has NumPy, or sets
    the variable itself, is left alone; the variable is removed again once NumPy is loaded,
    so nothing the process starts later inherits it.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def _build(argv: Sequence[str]) -> int:
    from generator import build
    from generator.config import load_config

    args = build_build_parser().parse_args(list(argv))
    _load_numpy()
    plan = build.plan(load_config(args.config), args.jobs)
    dry_run = args.check or args.diff
    if args.diff:
        sys.stdout.write(build.diff(plan))
    if not dry_run:
        build.apply(plan)
    for line in build.describe(plan, dry_run=dry_run):
        print(line, file=sys.stderr)
    return EXIT_CHANGED if args.check and plan.changes else EXIT_OK


def _report(argv: Sequence[str]) -> int:
    from generator.config import load_config
    from generator.report import write_report

    args = build_report_parser().parse_args(list(argv))
    path = write_report(load_config(args.config), args.out, args.functions)
    print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


COMMANDS = {"build": _build, "report": _report}


def _command(run: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    """Run a command. A crash is a bug: show it and exit 123, so that 1 from
    `build --check` always means "would change", never "crashed"."""
    try:
        return run(argv)
    except (GeneratorError, SystemExit, KeyboardInterrupt):
        raise
    except Exception:
        traceback.print_exc()
        return EXIT_INTERNAL


def _run(argv: Sequence[str]) -> int:
    from generator.pipeline import Spec, generate
    from generator.write import check_target, write_atomic

    args = build_parser().parse_args(list(argv))
    if args.output is not None:
        check_target(args.output, force=args.force)
    _load_numpy()
    source = generate(
        Spec(
            args.expression,
            args.name,
            args.vars,
            args.order,
            tuple(args.param),
            args.float64_inside,
            args.accurate_roots or args.accurate,
            args.compensated_arguments or args.accurate,
            args.scaled_tails or args.accurate,
            args.precise_sigmoid or args.accurate,
        )
    )
    if args.output is None:
        sys.stdout.write(source)
    else:
        write_atomic(args.output, source)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in COMMANDS:
            return _command(COMMANDS[argv[0]], argv[1:])
        return _command(_run, argv)
    except GeneratorError as exc:
        print(exc.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
