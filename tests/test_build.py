"""`python -m generator build`: the package, --check, --diff, safety, determinism, and the repo's own generated/.

Each test builds a small project in tmp_path: two cheap functions at order 1.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator import build
from generator.cli import main
from generator.config import load_config
from generator.write import is_generated

REPO_ROOT = Path(__file__).resolve().parent.parent

PROJECT = """\
[tool.generator]
output = "pkg"
order = 1

[[tool.generator.functions]]
name = "wave"
expr = "sin(x)"

[[tool.generator.functions]]
name = "softplus"
expr = "log(1 + exp(x))"
vars = ["x"]
"""

THIRD = """
[[tool.generator.functions]]
name = "bilinear"
expr = "x*y + x"
vars = ["x", "y"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory with pyproject.toml; the package goes to `pkg/`."""
    (tmp_path / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    return tmp_path


def run(capsys, project: Path, *options: str) -> tuple[int, str, str]:
    code = main(["build", "--config", str(project / "pyproject.toml"), *options])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_build_writes_modules_and_init(project: Path, capsys) -> None:
    code, out, err = run(capsys, project)
    assert code == 0, err
    assert out == ""
    files = snapshot(project / "pkg")
    assert sorted(files) == ["__init__.py", "softplus.py", "wave.py"]
    assert all(is_generated(text.decode()) for text in files.values())
    assert "3 files changed" in err

    init = files["__init__.py"].decode()
    module = files["wave.py"].decode()
    # The __init__ header is built like the template's first line.
    assert init.splitlines()[0] == module.splitlines()[0] == build.header_line()
    assert "# Source: [tool.generator] in ../pyproject.toml\n" in init
    assert "# Functions:\n#   softplus: log(1 + exp(x))\n#   wave: sin(x)\n" in init
    assert "from .softplus import softplus\nfrom .wave import wave\n" in init
    assert '__all__ = ["softplus", "wave"]' in init
    compile(init, "__init__.py", "exec")


def test_build_returns_sorted_written_files_and_second_build_writes_nothing(project: Path) -> None:
    config = load_config(project / "pyproject.toml")
    written = build.build(config)
    pkg = config.output
    assert written == [pkg / "__init__.py", pkg / "softplus.py", pkg / "wave.py"]
    stamps = {p: p.stat().st_mtime_ns for p in written}
    assert build.build(config) == []
    assert {p: p.stat().st_mtime_ns for p in written} == stamps


def test_check_passes_when_up_to_date(project: Path, capsys) -> None:
    assert run(capsys, project)[0] == 0
    code, out, err = run(capsys, project, "--check")
    assert code == 0
    assert out == ""
    assert "3 files up to date" in err


def test_check_names_missing_stale_and_edited_files_and_writes_nothing(project: Path, capsys) -> None:
    code, _, err = run(capsys, project, "--check")
    assert code == 1
    assert not (project / "pkg").exists()
    assert "would create" in err and "wave.py (missing)" in err

    assert run(capsys, project)[0] == 0
    wave = project / "pkg" / "wave.py"
    edited = wave.read_text(encoding="utf-8") + "\nprint('hand edit')\n"
    wave.write_text(edited, encoding="utf-8")
    code, _, err = run(capsys, project, "--check")
    assert code == 1
    assert "would update" in err and "wave.py (code differs: the generator changed, or the file was hand-edited)" in err
    assert "softplus.py" not in err
    assert "1 file would change" in err
    assert wave.read_text(encoding="utf-8") == edited

    pyproject = project / "pyproject.toml"
    pyproject.write_text(PROJECT.replace('"log(1 + exp(x))"', '"log(1 + exp(2*x))"'), encoding="utf-8")
    code, _, err = run(capsys, project, "--check")
    assert code == 1
    assert "softplus.py (stale" in err
    assert "__init__.py (stale" in err  # the __init__ header lists the expressions


def test_diff_prints_unified_diff_and_writes_nothing(project: Path, capsys) -> None:
    assert run(capsys, project)[0] == 0
    wave = project / "pkg" / "wave.py"
    wave.write_text(wave.read_text(encoding="utf-8") + "# hand edit\n", encoding="utf-8")
    before = snapshot(project / "pkg")

    code, out, err = run(capsys, project, "--diff")
    assert code == 0
    assert out.startswith("--- a/pkg/wave.py\n+++ b/pkg/wave.py\n@@ ")
    assert "\n-# hand edit\n" in out
    assert snapshot(project / "pkg") == before

    code, out, _ = run(capsys, project, "--check", "--diff")
    assert code == 1
    assert "-# hand edit" in out

    (project / "pkg" / "softplus.py").unlink()
    code, out, _ = run(capsys, project, "--diff")
    assert "--- /dev/null\n+++ b/pkg/softplus.py\n" in out


def test_refuses_to_overwrite_a_hand_written_file(project: Path, capsys) -> None:
    pkg = project / "pkg"
    pkg.mkdir()
    mine = "def softplus(x):\n    return x\n"
    (pkg / "softplus.py").write_text(mine, encoding="utf-8")
    for options in ((), ("--check",)):
        code, _, err = run(capsys, project, *options)
        assert code == 2
        assert "refusing to overwrite" in err and "softplus.py" in err
    # Nothing at all was written: not even the modules that could have been.
    assert snapshot(pkg) == {"softplus.py": mine.encode()}


def test_a_failing_function_writes_nothing(project: Path, capsys) -> None:
    bad = PROJECT + '\n[[tool.generator.functions]]\nname = "broken"\nexpr = "log(x"\n'
    (project / "pyproject.toml").write_text(bad, encoding="utf-8")
    code, _, err = run(capsys, project)
    assert code == 2
    assert "(broken)" in err
    assert not (project / "pkg").exists()


def test_processes_give_the_same_files_and_the_same_first_error(project: Path, capsys) -> None:
    """--jobs: the functions are generated in several processes, with the same bytes as in
    one, and a failing function is reported as one process would (the first in config
    order), with nothing written."""
    (project / "pyproject.toml").write_text(PROJECT + THIRD, encoding="utf-8")
    pkg = project / "pkg"
    assert run(capsys, project, "--jobs", "1")[0] == 0
    alone = snapshot(pkg)
    for path in pkg.iterdir():
        path.unlink()
    assert run(capsys, project, "--jobs", "3")[0] == 0
    assert snapshot(pkg) == alone
    broken = '\n[[tool.generator.functions]]\nname = "broken"\nexpr = "log(x"\n'
    (project / "pyproject.toml").write_text(PROJECT + broken + THIRD + broken.replace("broken", "later"), encoding="utf-8")
    shutil.rmtree(pkg)
    errors = [run(capsys, project, "--jobs", jobs)[1:] for jobs in ("1", "2")]
    assert errors[0] == errors[1]
    assert "(broken)" in errors[0][1] and "later" not in errors[0][1]
    assert not pkg.exists()
    code, _, err = run(capsys, project, "--jobs", "0")
    assert code == 2 and "--jobs must be a positive integer" in err


def test_removed_function_module_is_deleted_other_files_are_kept(project: Path, capsys) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(PROJECT + THIRD, encoding="utf-8")
    assert run(capsys, project)[0] == 0
    pkg = project / "pkg"
    assert (pkg / "bilinear.py").exists()
    notes = pkg / "notes.py"
    notes.write_text("# my notes, not generated\n", encoding="utf-8")

    pyproject.write_text(PROJECT, encoding="utf-8")
    code, _, err = run(capsys, project, "--check")
    assert code == 1
    assert "would delete" in err and "bilinear.py (its function is no longer in the config)" in err
    assert "notes.py" not in err
    assert (pkg / "bilinear.py").exists()

    code, _, err = run(capsys, project)
    assert code == 0
    assert "deleted" in err
    assert sorted(snapshot(pkg)) == ["__init__.py", "notes.py", "softplus.py", "wave.py"]
    assert "bilinear" not in (pkg / "__init__.py").read_text(encoding="utf-8")
    assert run(capsys, project, "--check")[0] == 0


def test_a_crash_exits_123_not_1(project: Path, capsys, monkeypatch) -> None:
    def crash(config: object, jobs: int = 1) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(build, "plan", crash)
    code = main(["build", "--check", "--config", str(project / "pyproject.toml")])
    err = capsys.readouterr().err
    assert code == 123
    assert "Traceback" in err and "RuntimeError: a bug" in err


def test_output_is_deterministic_across_runs_and_hash_seeds(project: Path, capsys, tmp_path_factory) -> None:
    (project / "pyproject.toml").write_text(PROJECT + THIRD, encoding="utf-8")
    pkg = project / "pkg"
    assert run(capsys, project)[0] == 0
    first = snapshot(pkg)

    for path in pkg.iterdir():
        path.unlink()
    assert run(capsys, project)[0] == 0
    assert snapshot(pkg) == first

    for path in pkg.iterdir():
        path.unlink()
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    seed = "12345" if os.environ.get("PYTHONHASHSEED") != "12345" else "54321"
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--config", str(project / "pyproject.toml")],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert snapshot(pkg) == first
    assert not list(elsewhere.iterdir())


def _build_in_fresh_process(directory: Path, functions: str) -> dict[str, bytes]:
    (directory / "pyproject.toml").write_text(
        '[tool.generator]\noutput = "pkg"\norder = 1\n' + functions, encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "generator", "build", "--jobs", "1", "--config", str(directory / "pyproject.toml")]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return snapshot(directory / "pkg")


def test_a_module_does_not_depend_on_the_functions_built_before_it(tmp_path_factory) -> None:
    """lbeta(3, x)'s reference evaluates lgamma at the integer 3; the judge's memo of mpmath
    values took the integer 3 and mpf(3) for one key, so a later function's reference at
    x = 3.0 got the earlier function's value (a NaN then), and the later module changed."""
    first = '[[tool.generator.functions]]\nname = "first"\nexpr = "lgamma(3) + lgamma(x)"\n'
    gap = '[[tool.generator.functions]]\nname = "gap"\nexpr = "lgamma(x) - lgamma(y)"\nvars = ["x", "y"]\n'
    after = _build_in_fresh_process(tmp_path_factory.mktemp("after"), first + gap)
    alone = _build_in_fresh_process(tmp_path_factory.mktemp("alone"), gap)
    assert after["gap.py"] == alone["gap.py"]


def test_build_does_not_import_tensorflow(project: Path) -> None:
    code = textwrap.dedent(f"""
        import sys
        from generator.cli import main
        assert main(["build", "--config", {str(project / "pyproject.toml")!r}]) == 0
        assert "tensorflow" not in sys.modules
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


def test_built_package_imports_and_runs(project: Path, capsys, tf, monkeypatch) -> None:
    assert run(capsys, project)[0] == 0
    monkeypatch.syspath_prepend(str(project))
    package = importlib.import_module("pkg")
    try:
        assert package.__all__ == ["softplus", "wave"]
        x = tf.constant([0.0, 100.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = package.softplus(x)
        assert y.numpy()[1] == pytest.approx(100.0)
        assert tape.gradient(y, x).numpy() == pytest.approx([0.5, 1.0])
        assert package.wave(0.0).numpy() == 0.0
    finally:
        for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
            del sys.modules[name]


@pytest.mark.slow
def test_repo_generated_package_is_up_to_date(capsys, monkeypatch) -> None:
    """What CI and the pre-commit hook run: `python -m generator build --check` in the repo."""
    monkeypatch.chdir(REPO_ROOT)
    code = main(["build", "--check"])
    err = capsys.readouterr().err
    assert code == 0, f"generated/ is out of date; run `python -m generator build`:\n{err}"
