"""Generating code never imports TensorFlow (nor needs it installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import json, sys
import generator
after_import = sorted(m for m in sys.modules if m.split(".")[0] == "tensorflow")
from generator import Spec, generate
from generator.cli import main
source = generate(Spec("log(exp(x) + exp(y))", order=3))
assert "@tf.custom_gradient" in source
code = main(["log(1 + exp(x))", "--name", "softplus", "-o", sys.argv[1]])
bad = main(["foo(x)"])
after_generate = sorted(m for m in sys.modules if m.split(".")[0] == "tensorflow")
print(json.dumps({"code": code, "bad": bad, "after_import": after_import,
                  "after_generate": after_generate}))
"""


def run(script, tmp_path, extra_env=None):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), **(extra_env or {}))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "softplus.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_generation_does_not_import_tensorflow(tmp_path):
    result = run(SCRIPT, tmp_path)
    assert result["code"] == 0 and result["bad"] == 2
    assert result["after_import"] == []
    assert result["after_generate"] == []
    assert "@tf.custom_gradient" in (tmp_path / "softplus.py").read_text()


def test_generation_works_when_tensorflow_cannot_be_imported(tmp_path):
    # A 'tensorflow' package that raises on import shadows the real one.
    fake = tmp_path / "fake"
    (fake / "tensorflow").mkdir(parents=True)
    (fake / "tensorflow" / "__init__.py").write_text("raise ImportError('tensorflow must not be imported')\n")
    script = f"import sys; sys.path.insert(0, {str(fake)!r})\n" + SCRIPT
    result = run(script, tmp_path)
    assert result["code"] == 0
    assert result["after_generate"] == []
