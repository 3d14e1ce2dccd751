"""Command line: `python -m generator EXPR [options]`.

Exit status follows black: 0 success, 1 would change (build --check),
2 bad input or arguments, 123 internal error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
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

functions: exp log log1p expm1 log2 log10 sqrt sin cos tan sinh cosh tanh asin
acos atan asinh acosh atanh erf erfc abs sigmoid softplus log_sigmoid
logaddexp(a,b) log1mexp xlogy(a,b) hypot(a,b); constants: pi e
"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise GeneratorError(message)


def _order(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--order must be an integer, got {text!r}") from None


def _vars(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(","))
    if not text.strip() or any(not n for n in names):
        raise argparse.ArgumentTypeError(f"--vars must be a comma-separated list of names, got {text!r}")
    return names


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
    parser.add_argument("-o", "--output", type=Path, metavar="PATH", help="write the module to PATH atomically")
    parser.add_argument(
        "--force", action="store_true", help="overwrite PATH even if it lacks the generated-file header"
    )
    return parser


def _run(argv: Sequence[str]) -> int:
    from generator.pipeline import Spec, generate
    from generator.write import check_target, write_atomic

    args = build_parser().parse_args(list(argv))
    if args.output is not None:
        check_target(args.output, force=args.force)
    source = generate(Spec(args.expression, args.name, args.vars, args.order))
    if args.output is None:
        sys.stdout.write(source)
    else:
        write_atomic(args.output, source)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _run(argv)
    except GeneratorError as exc:
        print(exc.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
