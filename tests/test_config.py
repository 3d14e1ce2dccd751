"""[tool.generator] in pyproject.toml: finding it, validating it, and the errors (file and key, exit 2).

These tests stop before generation (config errors come first), so they are fast.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from generator.cli import main
from generator.config import Config, FunctionConfig, _Reader, find_config, load_config
from generator.errors import GeneratorError

VALID = """\
[project]
name = "demo"

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
order = 2
params = {}
"""


def write(directory: Path, text: str) -> Path:
    path = directory / "pyproject.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_valid_config_is_typed_sorted_and_resolved(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID))
    assert isinstance(config, Config)
    assert config.path == (tmp_path / "pyproject.toml").resolve()
    assert config.output == (tmp_path / "pkg").resolve()
    assert config.order == 1
    assert config.functions == (
        FunctionConfig("softplus", "log(1 + exp(x))", ("x",), 2, (), "tool.generator.functions[1]"),
        FunctionConfig("wave", "sin(x)", None, 1, (), "tool.generator.functions[0]"),
    )
    with pytest.raises(AttributeError):
        config.order = 3  # type: ignore[misc]


def test_default_order_is_two(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID.replace("order = 1\n", "")))
    assert config.order == 2
    assert {f.name: f.order for f in config.functions} == {"softplus": 2, "wave": 2}


@pytest.mark.parametrize(
    "flag", ["float64_inside", "accurate_roots", "compensated_arguments", "scaled_tails", "precise_sigmoid"]
)
def test_flags_default_to_the_top_level_value(tmp_path: Path, flag: str) -> None:
    config = load_config(write(tmp_path, VALID))
    assert [getattr(f, flag) for f in config.functions] == [False, False]
    # Spelt with - at the top level, with _ in a function's table.
    text = VALID.replace("order = 1\n", f"order = 1\n{flag.replace('_', '-')} = true\n", 1)
    text = text.replace("params = {}", f"params = {{}}\n{flag} = false")
    config = load_config(write(tmp_path, text))
    assert {f.name: getattr(f, flag) for f in config.functions} == {"softplus": False, "wave": True}


def test_accurate_turns_on_the_four_accuracy_options(tmp_path: Path) -> None:
    four = ("accurate_roots", "compensated_arguments", "scaled_tails", "precise_sigmoid")
    text = VALID.replace("order = 1\n", "order = 1\naccurate = true\n", 1)
    text = text.replace("params = {}", "params = {}\nscaled-tails = false")
    config = load_config(write(tmp_path, text))
    flags = {f.name: {flag: getattr(f, flag) for flag in (*four, "float64_inside")} for f in config.functions}
    # A key of the option's own wins over accurate; float64-inside is not one of them.
    assert flags["wave"] == dict.fromkeys(four, True) | {"float64_inside": False}
    assert flags["softplus"] == dict.fromkeys(four, True) | {"scaled_tails": False, "float64_inside": False}
    config = load_config(write(tmp_path, VALID.replace("params = {}", "params = {}\naccurate = true")))
    assert {f.name: f.precise_sigmoid for f in config.functions} == {"softplus": True, "wave": False}


def test_found_by_walking_up_past_a_pyproject_without_the_table(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, VALID)
    inner = tmp_path / "sub" / "deeper"
    inner.mkdir(parents=True)
    write(tmp_path / "sub", '[project]\nname = "inner"\n')
    monkeypatch.chdir(inner)
    assert find_config() == (tmp_path / "pyproject.toml").resolve()
    assert load_config().output == (tmp_path / "pkg").resolve()


def test_dashes_map_to_underscores() -> None:
    read = _Reader(Path("pyproject.toml"))
    assert read.table({"a-b": 1, "c": 2}, "k", frozenset({"a_b", "c"})) == {"a_b": 1, "c": 2}
    with pytest.raises(GeneratorError, match=r"k\.a_b: given twice"):
        read.table({"a-b": 1, "a_b": 2}, "k", frozenset({"a_b"}))


def run_build(capsys, path: Path) -> tuple[int, str]:
    code = main(["build", "--config", str(path)])
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    return code, err


# (what to change in VALID, the key the message must name, words it must contain)
BAD = [
    (('output = "pkg"\n', ""), "tool.generator.output", "missing"),
    (('output = "pkg"', "output = 3"), "tool.generator.output", "string"),
    (('output = "pkg"', 'output = "."'), "tool.generator.output", "subdirectory"),
    (("order = 1\n", "order = 0\n"), "tool.generator.order", "from 1 to 6"),
    (("order = 1\n", "order = true\n"), "tool.generator.order", "boolean"),
    (("order = 2\n", 'order = "two"\n'), "tool.generator.functions[1].order", "'two'"),
    (('output = "pkg"', 'output = "pkg"\noutptu = "x"'), "tool.generator.outptu", "unknown key"),
    (('expr = "sin(x)"', 'expression = "sin(x)"'), "tool.generator.functions[0].expression", "unknown key"),
    (('name = "wave"\n', ""), "tool.generator.functions[0].name", "missing"),
    (('name = "wave"', 'name = "sin-wave"'), "tool.generator.functions[0].name", "identifier"),
    (('name = "wave"', 'name = "class"'), "tool.generator.functions[0].name", "identifier"),
    (('name = "wave"', 'name = "__init__"'), "tool.generator.functions[0].name", "reserved"),
    (('name = "wave"', 'name = "softplus"'), "tool.generator.functions[1].name", "another function"),
    (('name = "wave"', 'name = "SoftPlus"'), "tool.generator.functions[1].name", "case-insensitive"),
    (('expr = "sin(x)"', "expr = 1"), "tool.generator.functions[0].expr", "string"),
    (('vars = ["x"]', 'vars = "x"'), "tool.generator.functions[1].vars", "array"),
    (('vars = ["x"]', 'vars = ["x", "2y"]'), "tool.generator.functions[1].vars[1]", "identifier"),
    (('vars = ["x"]', 'vars = ["x", "x"]'), "tool.generator.functions[1].vars", "twice"),
    (("params = {}", "params = { a = inf }"), "tool.generator.functions[1].params.a", "finite number"),
    (("params = {}", "params = { 2a = 1.0 }"), "tool.generator.functions[1].params.2a", "identifier"),
    (("params = {}", 'params = { a = "big" }'), "tool.generator.functions[1].params.a", "number"),
    (("params = {}", "params = [1]"), "tool.generator.functions[1].params", "table"),
    (("order = 1\n", "order = 1\nfloat64-inside = 1\n"), "tool.generator.float64_inside", "true or false"),
    (("params = {}", 'params = {}\nfloat64_inside = "yes"'), "tool.generator.functions[1].float64_inside", "true or false"),
    (("order = 1\n", "order = 1\naccurate-roots = 0\n"), "tool.generator.accurate_roots", "true or false"),
    (("params = {}", 'params = {}\naccurate_roots = "on"'), "tool.generator.functions[1].accurate_roots", "true or false"),
    (("order = 1\n", "order = 1\ncompensated-arguments = 2\n"), "tool.generator.compensated_arguments", "true or false"),
    (("order = 1\n", "order = 1\nscaled-tails = 1\n"), "tool.generator.scaled_tails", "true or false"),
    (("params = {}", 'params = {}\nscaled_tails = "yes"'), "tool.generator.functions[1].scaled_tails", "true or false"),
]


@pytest.mark.parametrize(("change", "key", "words"), BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_config_error_names_file_and_key(tmp_path: Path, capsys, change, key, words) -> None:
    old, new = change
    assert old in VALID
    path = write(tmp_path, VALID.replace(old, new, 1))
    code, err = run_build(capsys, path)
    assert code == 2, err
    assert err.startswith("error: "), err
    assert str(path.resolve()) in err
    assert f"{key}:" in err
    assert words in err
    assert not (tmp_path / "pkg").exists()


def test_functions_must_be_given(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, '[tool.generator]\noutput = "pkg"\n')
    code, err = run_build(capsys, path)
    assert code == 2
    assert str(path.resolve()) in err and "tool.generator.functions:" in err


def test_functions_must_be_tables(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, '[tool.generator]\noutput = "pkg"\nfunctions = ["sin(x)"]\n')
    code, err = run_build(capsys, path)
    assert code == 2
    assert "tool.generator.functions[0]: expected a table" in err


def test_invalid_toml_names_the_file(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, '[tool.generator]\noutput = "pkg\n')
    code, err = run_build(capsys, path)
    assert code == 2
    assert str(path.resolve()) in err and "invalid TOML" in err


def test_config_without_the_table(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, '[project]\nname = "demo"\n')
    code, err = run_build(capsys, path)
    assert code == 2
    assert "no [tool.generator] table" in err


def test_missing_config_file(tmp_path: Path, capsys) -> None:
    code, err = run_build(capsys, tmp_path / "nope.toml")
    assert code == 2
    assert "does not exist" in err


def test_no_config_anywhere(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["build"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no pyproject.toml with a [tool.generator] table" in err


def test_expression_error_names_file_and_function(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, VALID.replace('expr = "sin(x)"', 'expr = "sin(x"'))
    code, err = run_build(capsys, path)
    assert code == 2
    first = err.splitlines()[0]
    assert str(path.resolve()) in first
    assert "tool.generator.functions[0] (wave)" in first
    assert not (tmp_path / "pkg").exists()
