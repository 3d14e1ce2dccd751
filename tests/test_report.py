"""`python -m generator report`: report.md and one valid PNG of plots per function."""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import pytest

from generator.cli import main

PROJECT = """\
[tool.generator]
output = "pkg"

[[tool.generator.functions]]
name = "softplus"
expr = "log(1 + exp(x))"
vars = ["x"]
order = 1

[[tool.generator.functions]]
name = "hyp"
expr = "sqrt(x**2 + y**2)"
vars = ["x", "y"]
order = 1

[[tool.generator.functions]]
name = "wave"
expr = "sin(x)"
order = 1
"""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    return tmp_path


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature and the chunk's CRC."""
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    body = data[16 : 16 + length]
    (crc,) = struct.unpack(">I", data[16 + length : 20 + length])
    assert zlib.crc32(kind + body) == crc
    assert data.endswith(b"IEND\xaeB`\x82")
    return struct.unpack(">II", body[:8])


def test_report_writes_markdown_and_plots(project: Path, capsys, tf) -> None:
    pytest.importorskip("matplotlib")
    out = project / "review"
    code = main(
        ["report", "--config", str(project / "pyproject.toml"), "--out", str(out), "--functions", "softplus,hyp"]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["hyp.png", "report.md", "softplus.png"]
    for name in ("hyp.png", "softplus.png"):
        width, height = png_size((out / name).read_bytes())
        assert width > 400 and height > 300

    import matplotlib.image

    assert matplotlib.image.imread(out / "softplus.png").ndim == 3

    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## hyp" in report and "## softplus" in report and "## wave" not in report
    assert "![softplus](softplus.png)" in report and "![hyp](hyp.png)" in report
    assert "Slice along x with y = 0.5." in report
    # Summary rows: generated / naive max bits per order; naive softplus overflows (32 bits).
    softplus_row = next(line for line in report.splitlines() if line.startswith("| [softplus]"))
    assert softplus_row.count(" / 32") == 3
    assert "f(x) = softplus(x)" in report  # the module's forms are quoted for review
    assert "pkg/softplus.py" not in report  # not built: no up-to-date line


def test_report_says_whether_the_built_module_matches(project: Path, capsys, tf) -> None:
    pytest.importorskip("matplotlib")
    config = str(project / "pyproject.toml")
    assert main(["build", "--config", config]) == 0
    from generator.config import load_config
    from generator.report import write_report

    report = write_report(load_config(Path(config)), project / "review", ["wave"], points=40)
    assert "This module matches `pkg/wave.py`." in report.read_text(encoding="utf-8")
    assert (project / "review" / "wave.png").read_bytes()[:8] == PNG_SIGNATURE


def test_report_without_matplotlib_exits_2(project: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    code = main(["report", "--config", str(project / "pyproject.toml"), "--out", str(project / "review")])
    err = capsys.readouterr().err
    assert code == 2
    assert "matplotlib" in err and "generator[plots]" in err
    assert not (project / "review").exists()


def test_report_unknown_function_exits_2(project: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    code = main(["report", "--config", str(project / "pyproject.toml"), "--functions", "softplus,nope"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--functions: nope not in" in err
