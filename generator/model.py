"""The model of what to emit: plain frozen dataclasses, free of SymPy and Jinja.

`derive` and `emit` fill it in; the templates only read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Assignment:
    """`name = code`, one line of a level's body."""

    name: str
    code: str


@dataclass(frozen=True)
class Level:
    """One level of the nested custom gradient.

    Level 0 computes f in the forward pass. Level k computes the k-th
    partials; its outputs are returned by the k-th custom function (or, for
    the last level, used directly by the last gradient function).
    """

    order: int
    function: str  # the custom function computing this level's outputs
    gradient: str  # the gradient function that belongs to this level
    params: tuple[str, ...]  # unused_x, ... (empty for level 0, which takes the inputs)
    body: tuple[Assignment, ...]  # temporaries and outputs, in dependency order
    outputs: tuple[str, ...]  # names of the partials this level returns
    upstreams: tuple[str, ...]  # the gradient function's parameters, one per output
    # For each input, the sum over outputs of upstream * next-level partial.
    input_gradients: tuple[str, ...]


@dataclass(frozen=True)
class DocForm:
    """A line of the docstring: which derivative, and its math."""

    label: str
    math: str


@dataclass(frozen=True)
class ModuleModel:
    """Everything the template needs to write one generated module."""

    name: str
    core: str  # the private @tf.custom_gradient function
    dtype_var: str  # local names in the public wrapper
    result_var: str
    expression: str
    command: str  # the options that reproduce the file, for the header
    generator_version: str
    inputs: tuple[str, ...]
    params: tuple[tuple[str, str], ...]  # keyword-only, not differentiated: (name, default literal)
    order: int
    levels: tuple[Level, ...]  # 0 .. order
    docs: tuple[DocForm, ...]
    rewrites: tuple[str, ...]  # "name: why" for each stabilising rule that fired
    accuracy: tuple[str, ...]  # one line per order, empty when not measured
    helpers: tuple[str, ...]  # names of module-level helper functions used
    float64_inside: bool = False  # float32 inputs are computed in float64
