"""Smoke tests for benchmarks/: each runs with its smallest settings and prints its tables.

They check that the benchmarks still run against the current generator, not
how fast anything is: no timing is asserted.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_latency_prints_its_tables(capsys: pytest.CaptureFixture[str]) -> None:
    latency = _load("latency")
    argv = ["--quick", "--functions", "softplus", "--repeats", "1", "--suite-repeats", "1", "--no-write"]
    assert latency.main(argv) == 0
    out = capsys.readouterr().out
    assert "| generator CLI" in out
    assert "| softplus" in out
    for step in ("import sympy", "import generator", "parse", "emit", "render", "black"):
        assert f"| {step} " in out


def test_runtime_prints_its_tables(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tensorflow")
    runtime = _load("runtime")
    argv = ["--functions", "softplus", "--size", "1024", "--rounds", "2", "--calls", "1", "--warmup", "1", "--no-write"]
    assert runtime.main(argv) == 0
    out = capsys.readouterr().out
    for mode in ("forward", "first", "second"):
        assert f"| softplus | tf.math.softplus | {mode} " in out
    assert "## Peak memory" in out
    assert "agrees with its reference" in out


def test_latency_times_another_suite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # --suite: the hard inputs' list, shown without the suite's targets and written beside it.
    latency = _load("latency")
    suite = tmp_path / "few.toml"
    suite.write_text('[[function]]\nname = "cube"\nexpr = "x**3"\nvars = ["x"]\n')
    output = tmp_path / "few.md"
    argv = ["--quick", "--suite", str(suite), "--repeats", "1", "--suite-repeats", "1", "--output", str(output)]
    assert latency.main(argv) == 0
    text = output.read_text()
    assert "## 2. Suite (" in text and "few.toml): 1 functions" in text
    assert "| cube " in text
    assert "target <= 3 s" not in text and "Target <= 20 s" not in text


def test_accuracy_scores_a_higher_order(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # --order 3: the module generated at order 3, and every order up to it scored.
    pytest.importorskip("tensorflow")
    accuracy = _load("accuracy")
    output = tmp_path / "order3.md"
    argv = ["--order", "3", "--dtype", "float32", "--functions", "softplus", "--points", "40", "--no-cache"]
    assert accuracy.main([*argv, "--output", str(output)]) == 0
    text = output.read_text()
    assert "points within 3 bits f/f'/f''/f''': " in text
    for label in ("f", "f'", "f''", "f'''"):
        assert f"| softplus | float32 | {label} | " in text
    assert "| softplus | float32 | f'''' |" not in text
