"""Prompt templates of suite files: jinja2 in its sandbox with strict undefined names, so a file
from someone else renders text and nothing else (no attribute walks to Python internals), within
bounds on output size and time (the bounded environment of ``lingdiag.io.templates``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import StrictUndefined, TemplateError, meta, nodes

from lingdiag.io.templates import BoundedEnvironment, TemplateProblem, render_bounded

__all__ = ["Template", "TemplateProblem", "compile_template"]

_ENV = BoundedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


@dataclass(frozen=True)
class Template:
    """One compiled template and its source text."""

    source: str
    compiled: Any

    def render(self, values: Mapping[str, Any]) -> str:
        """The text for ``values``; a sandbox refusal, an undefined name, a runtime error or a
        bound passed is a ``TemplateProblem``.
        """
        return render_bounded(self.compiled, values)


def compile_template(source: str, names: Iterable[str]) -> Template:
    """Compile ``source``, allowing only ``names`` as variables and no ``_``-prefixed attribute.

    Raises:
        TemplateProblem: a syntax error, an unknown name, or an attempt to reach Python internals.
    """
    allowed = set(names)
    try:
        ast = _ENV.parse(source)
    except TemplateError as e:
        raise TemplateProblem(f"template syntax: {e}") from None
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        key = node.attr if isinstance(node, nodes.Getattr) else getattr(node, "arg", None)
        attr = key.value if isinstance(key, nodes.Const) else key
        if isinstance(attr, str) and attr.startswith("_"):
            raise TemplateProblem(f"template reaches attribute {attr!r}; templates may use the item's fields only")
    unknown = sorted(meta.find_undeclared_variables(ast) - allowed)
    if unknown:
        raise TemplateProblem(f"template uses unknown field {unknown[0]!r}; known: {', '.join(sorted(allowed))}")
    return Template(source, _ENV.from_string(ast))
