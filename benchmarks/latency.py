"""Latency of the generator: how long a user waits for a module.

Three measurements, each printed as a table and written to
benchmarks/results/latency.md:

1. CLI wall time. ``python -m generator "log(1+exp(x))"`` against the anchor
   ``python -c "import sympy, jinja2, black"`` (the imports the generator cannot
   avoid) and ``python -c "import tensorflow"`` (for scale: what the user pays
   anyway to use the module). The contestants run interleaved, in a rotating
   order, in fresh interpreters; the figure is the median of the per-round
   ratios, which cancels most of the noise of a shared machine.
2. The 20-function suite (tests/functions.toml) generated at order 2 by
   ``generate(Spec(...))`` in one fresh process, repeated; per-function
   medians, their total and the slowest.
3. A profile of where one generation's time goes: imports, then the stages of
   ``generate`` (parse; derive, split into SymPy work, stabilising rules,
   choosing forms, regimes, series and the judge's mpmath and float32
   evaluations; emit; render; black), timed in-process with
   ``time.perf_counter``, for the first (cold) generation and summed over the
   rest of the suite (warm).

Usage:
    .venv/bin/python benchmarks/latency.py              # full run, a few minutes
    .venv/bin/python benchmarks/latency.py --quick      # fewer repeats, no TensorFlow
    .venv/bin/python benchmarks/latency.py --functions softplus,mish --repeats 3

Ratios are the point; absolute seconds depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks._report import commit_note, shown_argv, table  # noqa: E402
FUNCTIONS_TOML = REPO_ROOT / "tests" / "functions.toml"
RESULTS = REPO_ROOT / "benchmarks" / "results" / "latency.md"

CLI_EXPRESSION = "log(1+exp(x))"
TARGET_CLI_RATIO = 1.5
TARGET_SUITE_TOTAL_S = 20.0
TARGET_SUITE_SLOWEST_S = 3.0


def child_env() -> dict[str, str]:
    """The environment of every child: the checkout importable, TensorFlow's C++ log quiet,
    bytecode cached.

    The anchor's packages were byte-compiled by pip at install, as an installed generator
    is; a checkout's modules get their __pycache__ on the untimed warm-up run, unless
    PYTHONDONTWRITEBYTECODE (set in some sandboxes) forbids it and every timed run compiles
    the generator's modules again (about 60 ms on the machine of benchmarks/results/).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def load_suite(suite_path: Path, names: Sequence[str] | None) -> list[dict]:
    with suite_path.open("rb") as handle:
        suite = tomllib.load(handle)["function"]
    if names:
        known = {f["name"] for f in suite}
        unknown = sorted(set(names) - known)
        if unknown:
            raise SystemExit(f"unknown function(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        suite = [f for f in suite if f["name"] in names]
    return suite


# --- children: run in a fresh interpreter, print one JSON line ---------------------


def _timed_import(name: str, timings: dict[str, float]) -> None:
    start = time.perf_counter()
    __import__(name)
    timings[f"import {name}"] = time.perf_counter() - start


# (module, function, label): the functions whose time the profile attributes, each
# patched where its callers look it up. Time is exclusive: a wrapped call inside
# another (judge.reference inside regimes) counts only for the inner label.
# Functions a future generator no longer has are skipped.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("generator.pipeline", "parse", "parse"),
    ("generator.pipeline", "derive", "derive: SymPy diff, cancel and glue"),
    ("generator.derive", "optimize", "derive: stabilize rules"),
    ("generator.derive", "_choose", "derive: choose among forms"),
    ("generator.regimes", "add_regimes", "derive: regimes"),
    ("generator.regimes", "_series_regime", "derive: series regime (sp.series)"),
    ("generator.derive", "_accuracy", "derive: accuracy lines"),
    ("generator.judge", "_reference", "judge: mpmath reference values"),
    ("generator.judge", "evaluate32", "judge: float32 evaluation (lambdify)"),
    ("generator.pipeline", "build_model", "emit"),
    ("generator.pipeline", "render", "render"),
    ("generator.pipeline", "format_source", "black"),
)
OTHER = "other"


def _is_derive(label: str) -> bool:
    return label.startswith(("derive", "judge"))


def child_profile(suite_path: Path, names: Sequence[str] | None) -> dict:
    """Imports, then every suite function generated with the pipeline's stages timed."""
    imports: dict[str, float] = {}
    for module in ("sympy", "numpy", "jinja2", "black", "generator"):
        _timed_import(module, imports)

    import importlib

    import generator.pipeline as pipeline

    exclusive: dict[str, float] = {}
    children: list[float] = []  # time of wrapped calls inside each open wrapped call

    def timed(label: str, func: Callable) -> Callable:
        def wrapper(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            children.append(0.0)
            try:
                return func(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                inner = children.pop()
                exclusive[label] = exclusive.get(label, 0.0) + elapsed - inner
                if children:
                    children[-1] += elapsed

        return wrapper

    present = []
    for module_name, attr, label in STAGES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if callable(getattr(module, attr, None)):
            setattr(module, attr, timed(label, getattr(module, attr)))
            present.append(label)

    per_function = []
    for entry in load_suite(suite_path, names):
        exclusive.clear()
        start = time.perf_counter()
        pipeline.generate(pipeline.Spec(entry["expr"], entry["name"], tuple(entry["vars"]), 2))
        total = time.perf_counter() - start
        stages = {label: exclusive.get(label, 0.0) for label in present}
        stages[OTHER] = total - sum(stages.values())
        per_function.append({"name": entry["name"], "total": total, "stages": stages})
    return {"imports": imports, "stages": [*present, OTHER], "functions": per_function}


# --- measurements ---------------------------------------------------------------------


def shown_path(path: Path) -> Path:
    path = path.resolve()
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def run_wall(argv: Sequence[str], ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO_ROOT, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode not in ok:
        raise subprocess.CalledProcessError(done.returncode, argv)
    return time.perf_counter() - start


def measure_build(repeats: int) -> list[float]:
    """Wall times of `python -m generator build --check` on the repo's own package (the
    suite), one process per CPU (build's default --jobs); exit 1 (out of date) counts too."""
    return [run_wall([sys.executable, "-m", "generator", "build", "--check"], ok=(0, 1)) for _ in range(repeats)]


@dataclass
class CliResult:
    walls: dict[str, list[float]]
    ratios: dict[str, list[float]]  # per round, generator / contestant


def measure_cli(repeats: int, with_tf: bool) -> CliResult:
    py = sys.executable
    contestants: dict[str, list[str]] = {
        "generator CLI": [py, "-m", "generator", CLI_EXPRESSION],
        "import sympy, jinja2, black": [py, "-c", "import sympy, jinja2, black"],
    }
    if with_tf:
        contestants["import tensorflow"] = [py, "-c", "import tensorflow"]
    names = list(contestants)
    for name in names:  # warm the OS file cache and __pycache__ once, untimed
        run_wall(contestants[name])
    walls: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            walls[name].append(run_wall(contestants[name]))
    gen = walls["generator CLI"]
    ratios = {name: [g / w for g, w in zip(gen, walls[name])] for name in names[1:]}
    return CliResult(walls, ratios)


def run_child(kind: str, suite_path: Path, names: Sequence[str] | None) -> dict:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--suite", str(suite_path)]
    if names:
        argv += ["--functions", ",".join(names)]
    out = subprocess.run(argv, cwd=REPO_ROOT, env=child_env(), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_profile(repeats: int, suite_path: Path, names: Sequence[str] | None) -> list[dict]:
    return [run_child("profile", suite_path, names) for _ in range(repeats)]


# --- report ---------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def environment_note() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?", "?", "?")
    return (
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start; "
        f"{commit_note()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}."
    )


def report(cli: CliResult, profiles: list[dict], builds: list[float], args: argparse.Namespace, env_note: str) -> str:
    parts: list[str] = []
    parts.append("# Generator latency\n")
    command = " ".join(["python benchmarks/latency.py", *args.argv])
    parts.append(f"Produced by `{command}`.\n")
    parts.append(env_note + "\n")

    # 1. CLI
    gen_med = median(cli.walls["generator CLI"])
    rows = []
    for name, walls in cli.walls.items():
        ratio = "1.00" if name == "generator CLI" else f"{median(cli.ratios[name]):.2f}"
        rows.append([name, f"{median(walls):.3f}", f"{min(walls):.3f}", f"{max(walls):.3f}", ratio])
    anchor_ratio = median(cli.ratios["import sympy, jinja2, black"])
    parts.append(f'## 1. CLI wall time (`python -m generator "{CLI_EXPRESSION}"`)\n')
    parts.append(
        f"{len(cli.walls['generator CLI'])} interleaved rounds in fresh interpreters (output to /dev/null). "
        "Ratio: median over rounds of generator time / contestant time in the same round.\n"
    )
    parts.append(table(["command", "median s", "min s", "max s", "generator / this"], rows) + "\n")
    parts.append(
        f"Target generator / anchor <= {TARGET_CLI_RATIO}: **{anchor_ratio:.2f} "
        f"{verdict(anchor_ratio <= TARGET_CLI_RATIO)}**"
        + (
            f"; the generator costs {median(cli.ratios['import tensorflow']):.2f}x an `import tensorflow`."
            if "import tensorflow" in cli.ratios
            else "."
        )
        + f" Generator median {gen_med:.3f} s.\n"
    )

    # 2. Suite
    names = [f["name"] for f in profiles[0]["functions"]]
    per_fn = {n: median([p["functions"][i]["total"] for p in profiles]) for i, n in enumerate(names)}
    total = median([sum(f["total"] for f in p["functions"]) for p in profiles])
    slowest = max(per_fn, key=per_fn.get)
    imports_total = median([sum(p["imports"].values()) for p in profiles])
    suite_name = "" if args.own_suite else f" ({shown_path(args.suite)})"
    parts.append(f"## 2. Suite{suite_name}: {len(names)} functions at order 2, one process\n")
    parts.append(
        f"Median over {len(profiles)} fresh processes of `generate(Spec(expr, name, vars, 2))`. "
        "The first function also pays the one-off warm-up (black's grammar, the Jinja template, SymPy caches).\n"
    )

    def part(i: int, keep: Callable[[str], bool]) -> float:
        return median([sum(v for k, v in p["functions"][i]["stages"].items() if keep(k)) for p in profiles])

    suite_rows = [
        [
            n,
            f"{per_fn[n]:.3f}",
            f"{part(i, _is_derive):.3f}",
            f"{part(i, lambda k: k == 'black'):.3f}",
            f"{part(i, lambda k: not _is_derive(k) and k != 'black'):.3f}",
        ]
        for i, n in enumerate(names)
    ]
    parts.append(table(["function", "total s", "derive s", "black s", "rest s"], suite_rows) + "\n")
    # The targets are the suite's; another suite (hard_inputs.toml) is shown, not judged.
    target = (
        f" (target <= {TARGET_SUITE_SLOWEST_S:.0f} s: **{verdict(per_fn[slowest] <= TARGET_SUITE_SLOWEST_S)}**)"
        if args.own_suite
        else ""
    )
    parts.append(
        f"Total in one process {total:.2f} s; slowest {slowest} {per_fn[slowest]:.3f} s{target}. "
        f"Imports before the first function: {imports_total:.2f} s.\n"
    )
    if builds:
        built = median(builds)
        parts.append(
            f"The package build, `python -m generator build --check` in a fresh process (the 20 functions in "
            f"{os.cpu_count()} processes, its default `--jobs`), median of {len(builds)}: {built:.2f} s "
            f"(target <= {TARGET_SUITE_TOTAL_S:.0f} s: **{verdict(built <= TARGET_SUITE_TOTAL_S)}**).\n"
        )
    elif args.own_suite:
        parts.append(
            f"(Target <= {TARGET_SUITE_TOTAL_S:.0f} s for the whole package build, measured without --functions; "
            f"this subset in one process: {verdict(total <= TARGET_SUITE_TOTAL_S)}.)\n"
        )

    # 3. Profile
    stage_names = profiles[0]["stages"]
    first = [p["functions"][0] for p in profiles]
    first_total = median([f["total"] for f in first])
    rest_total = median([sum(f["total"] for f in p["functions"][1:]) for p in profiles])
    rows = []
    for name in profiles[0]["imports"]:
        rows.append([name, f"{median([p['imports'][name] for p in profiles]) * 1000:.0f}", "", ""])
    for stage in stage_names:
        cold = median([f["stages"].get(stage, 0.0) for f in first])
        warm = median([sum(f["stages"].get(stage, 0.0) for f in p["functions"][1:]) for p in profiles])
        rows.append(
            [
                stage,
                f"{cold * 1000:.0f}",
                f"{100 * cold / first_total:.0f}%" if first_total else "",
                f"{warm * 1000:.0f} ({100 * warm / rest_total:.0f}%)" if rest_total else "-",
            ]
        )
    parts.append(f"## 3. Where the time goes ({names[0]} first, cold; then the rest of the suite, warm)\n")
    parts.append(
        "In-process `time.perf_counter`, medians over the same processes as above. Imports are cumulative in the "
        "order listed (each row is what that import adds; `import generator` is what remains after the others). "
        "The steps wrap functions of the pipeline where their callers look them up; times are exclusive (a "
        "wrapped call inside another counts only for the inner one), so the rows add up to the total. "
        "`derive: SymPy diff, cancel and glue` is what `derive` spends outside the other wrapped functions. "
        "`judge:` rows are shared by choose, regimes and accuracy.\n"
    )
    parts.append(
        table(["step", f"first ({names[0]}) ms", "share of first", f"other {len(names) - 1} functions ms"], rows) + "\n"
    )
    parts.append(
        f"First generation {first_total * 1000:.0f} ms; the other {len(names) - 1} together {rest_total * 1000:.0f} ms.\n"
    )
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, help="CLI rounds (default 15, 5 with --quick)")
    parser.add_argument("--suite-repeats", type=int, help="fresh suite processes (default 5, 2 with --quick)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and no TensorFlow import")
    parser.add_argument("--no-tf", action="store_true", help="skip the `import tensorflow` contestant")
    parser.add_argument(
        "--suite",
        type=Path,
        default=FUNCTIONS_TOML,
        help="suite TOML (default: tests/functions.toml; benchmarks/hard_inputs.toml holds the slow ones)",
    )
    parser.add_argument("--functions", help="comma-separated suite names (default: all of the suite)")
    parser.add_argument(
        "--output", type=Path, help="markdown file to write (default: benchmarks/results/latency.md, latency-NAME.md for another suite)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--child", choices=["profile"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.argv = shown_argv(argv)
    names = [n.strip() for n in args.functions.split(",")] if args.functions else None

    if args.child:
        print(json.dumps(child_profile(args.suite.resolve(), names)))
        return 0

    args.suite = args.suite.resolve()
    args.own_suite = args.suite == FUNCTIONS_TOML  # the one the targets and the package build are for
    if args.output is None:
        args.output = RESULTS if args.own_suite else RESULTS.with_name(f"latency-{args.suite.stem}.md")
    load_suite(args.suite, names)  # fail early on an unknown name
    repeats = args.repeats or (5 if args.quick else 15)
    suite_repeats = args.suite_repeats or (2 if args.quick else 5)
    env_note = environment_note()
    cli = measure_cli(repeats, with_tf=not (args.quick or args.no_tf))
    profiles = measure_profile(suite_repeats, args.suite, names)
    # The package build is the repo's own suite: measured only for it, whole.
    builds = measure_build(suite_repeats) if names is None and args.own_suite else []
    text = report(cli, profiles, builds, args, env_note)
    print(text)
    if not args.no_write:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {shown_path(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
