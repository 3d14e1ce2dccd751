"""Shared fixtures for the generator's test suite.

* ``tf``: TensorFlow, imported once per session (only by tests that ask for it,
  so the parser/CLI/formatting tests stay light).
* ``load_module``: generate a module for a `Spec`, write it under a session
  temporary directory and import it with importlib; cached per spec.
* ``functions_suite``: the entries of tests/functions.toml.
* ``--regen-goldens`` (or ``GENERATOR_REGENERATE_GOLDENS=1``): rewrite the
  golden files under tests/cases/ instead of comparing against them.
* marker ``slow``: tests that take long (the wheel build). They run by default;
  deselect them with ``-m "not slow"``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tomllib
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
FUNCTIONS_TOML = TESTS_DIR / "functions.toml"

# Quiet TensorFlow's C++ logging before anything imports it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# benchmarks/runtime.py's memory statistics need the BFC allocator on the CPU (see there).
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

# The suite runs against the checkout even when the package is not installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-goldens",
        action="store_true",
        default=False,
        help="rewrite tests/cases/*/expected.py from the current generator instead of comparing",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: slow test (builds a wheel, installs into a venv); runs by default"
    )


def load_functions_suite() -> list[dict]:
    with FUNCTIONS_TOML.open("rb") as handle:
        return tomllib.load(handle)["function"]


@pytest.fixture(scope="session")
def regen_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--regen-goldens")) or os.environ.get(
        "GENERATOR_REGENERATE_GOLDENS", ""
    ) not in ("", "0")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def functions_suite() -> list[dict]:
    return load_functions_suite()


@pytest.fixture(scope="session")
def tf():
    """TensorFlow, imported once for the session."""
    import tensorflow

    return tensorflow


@pytest.fixture(scope="session")
def load_module(tmp_path_factory: pytest.TempPathFactory, tf):
    """load_module(expr, name=None, variables=None, order=2, params=(), float64_inside=False,
    accurate_roots=False, compensated_arguments=False, scaled_tails=False, precise_sigmoid=False)
    -> the imported module.

    `params` are the Spec's keyword-only parameters: ((name, default), ...).
    Generated once per set of arguments for the whole session.
    """
    from generator import Spec, generate

    directory = tmp_path_factory.mktemp("generated_modules")
    cache: dict[tuple, object] = {}

    def load(
        expr: str,
        name: str | None = None,
        variables=None,
        order: int = 2,
        params=(),
        float64_inside=False,
        accurate_roots=False,
        compensated_arguments=False,
        scaled_tails=False,
        precise_sigmoid=False,
    ):
        params = tuple((p, value) for p, value in params)
        variables = None if variables is None else tuple(variables)
        options = (float64_inside, accurate_roots, compensated_arguments, scaled_tails, precise_sigmoid)
        key = (expr, name, variables, order, params, *options)
        if key not in cache:
            spec = Spec(expr, name, variables, order, params, *options)
            source = generate(spec)
            module_name = f"generated_{len(cache)}"
            path = directory / f"{module_name}.py"
            path.write_text(source, encoding="utf-8")
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            cache[key] = module
        return cache[key]

    return load
