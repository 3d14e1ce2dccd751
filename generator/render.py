"""Render a ModuleModel with the Jinja templates and format it with black.

Templates live in the top-level ``templates/`` folder, which is installed as
the package ``generator.templates`` (see pyproject.toml), so an installed
wheel finds them as well as a source checkout.
Hands on: the final module source, formatted once with a pinned black mode.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from generator.model import ModuleModel

LINE_LENGTH = 100


def template_dir() -> Path:
    """Where the templates are: inside the installed package, else the checkout's templates/."""
    installed = Path(__file__).resolve().parent / "templates"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "templates"


def _docsafe(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["docsafe"] = _docsafe
    return env


def render(model: ModuleModel) -> str:
    return environment().get_template("module.py.j2").render(m=model)


def format_source(source: str) -> str:
    """Format with black in-process, with a pinned mode."""
    import black

    mode = black.Mode(line_length=LINE_LENGTH, target_versions={black.TargetVersion.PY310})
    return black.format_str(source, mode=mode)
