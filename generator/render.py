"""Render a ModuleModel with the Jinja templates and format it with black.

Templates live in the top-level ``templates/`` folder, which is installed as
the package ``generator.templates`` (see pyproject.toml), so an installed
wheel finds them as well as a source checkout.

The templates are the source of truth. ``templates/compiled/`` holds them
compiled to Python by Jinja, with a digest of the sources and of Jinja's
version (`compile_templates`; ``pytest tests/test_golden.py --regen-goldens``
rewrites it): compiling module.py.j2 costs about 40 ms on every cold start,
loading the compiled module about 1 ms. The copy is used only while the
digest matches, so an edited template is rendered from its source until the
copy is rewritten, and tests/test_golden.py fails while it is stale.
Hands on: the final module source, formatted once with a pinned black mode.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
from pathlib import Path

import jinja2

from generator.model import ModuleModel

LINE_LENGTH = 100
COMPILED = "compiled"
DIGEST_FILE = "DIGEST"


def template_dir() -> Path:
    """Where the templates are: inside the installed package, else the checkout's templates/."""
    installed = Path(__file__).resolve().parent / "templates"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "templates"


def _docsafe(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _is_template(name: str) -> bool:
    return name.endswith(".j2")


def source_digest(directory: Path) -> str:
    """sha256 of Jinja's version and every template's name and text under `directory`."""
    digest = hashlib.sha256(jinja2.__version__.encode())
    for path in sorted(directory.rglob("*.j2")):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _compiled_is_current(directory: Path) -> bool:
    try:
        recorded = (directory / COMPILED / DIGEST_FILE).read_text(encoding="ascii").strip()
    except OSError:
        return False
    return recorded == source_digest(directory)


def _environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["docsafe"] = _docsafe
    return env


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment: the compiled copy if it is current, else the sources."""
    directory = template_dir()
    if _compiled_is_current(directory):
        return _environment(jinja2.ModuleLoader(str(directory / COMPILED)))
    return _environment(jinja2.FileSystemLoader(str(directory)))


def compile_templates(directory: Path, target: Path) -> None:
    """Compile every template under `directory` into `target` (emptied first), with its digest."""
    if target.exists():
        shutil.rmtree(target)
    env = _environment(jinja2.FileSystemLoader(str(directory)))
    env.compile_templates(str(target), filter_func=_is_template, zip=None, ignore_errors=False)
    (target / DIGEST_FILE).write_text(source_digest(directory) + "\n", encoding="ascii")


def render(model: ModuleModel) -> str:
    return environment().get_template("module.py.j2").render(m=model)


def format_source(source: str) -> str:
    """Format with black in-process, with a pinned mode."""
    import black

    mode = black.Mode(line_length=LINE_LENGTH, target_versions={black.TargetVersion.PY310})
    return black.format_str(source, mode=mode)
