"""Our product's modules as parsed source, for the tests that read the whole tree.

``modules()`` maps each module of ``bridge``, ``webhooks``, ``scheduler`` and ``vbridge`` (dotted
name) to its ``ast`` tree; ``parse`` parses a file once per session. ``exported`` reads a module's ``__all__``;
``defined`` lists the names a module binds at top level (also under ``if``/``try``), leaving
out type variables and loggers, which are no module's API; ``imports`` lists its
``import``/``from … import`` statements of modules as (module, local name) pairs.
"""

from __future__ import annotations

import ast
import functools
import pathlib
from collections.abc import Iterator

__all__ = ["OURS", "ROOT", "defined", "exported", "imports", "modules", "parse"]

ROOT = pathlib.Path(__file__).resolve().parents[2]
OURS = ("bridge", "webhooks", "scheduler", "vbridge")
_PLUMBING = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "getLogger"})


@functools.cache
def parse(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@functools.cache
def modules() -> dict[str, ast.Module]:
    found = {}
    for top in OURS:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = parse(path)
    return found


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``body``, nested ones too (imports are statements: no expression is
    walked)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements([n for n in inner if isinstance(n, ast.stmt)])
            for item in inner or ():
                if isinstance(item, ast.ExceptHandler | ast.match_case):
                    yield from _statements(item.body)


def exported(tree: ast.Module) -> list[str] | None:
    """The module's ``__all__`` as written (a literal list or tuple), or None without one."""
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "__all__" and getattr(node, "value", None) is not None:
            value = ast.literal_eval(node.value)  # type: ignore[attr-defined]
            return list(value)
    return None


def _plumbing(value: ast.expr | None) -> bool:
    """``T = TypeVar("T")``, ``log = logging.getLogger(__name__)``: a binding no caller uses."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in _PLUMBING


def defined(body: list[ast.stmt]) -> set[str]:
    """The names ``body`` binds at its level: functions, classes and assignments, not imports."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and not _plumbing(node.value):
            names |= {n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and not _plumbing(node.value):
            names.add(node.target.id)
        elif isinstance(node, ast.If):
            names |= defined(node.body) | defined(node.orelse)
        elif isinstance(node, ast.Try):
            names |= defined(node.body) | defined(node.orelse) | defined(node.finalbody)
            names |= {name for handler in node.handlers for name in defined(handler.body)}
    return names - {"__all__"}


def imports(tree: ast.Module) -> list[tuple[str, str]]:
    """Each module ``tree`` imports under a name of its own choosing, as (its dotted name, that
    name), wherever the import sits (functions too): ``import numpy as np`` and ``from package
    import module [as name]`` when ``module`` is one of ours (``from typing import Any`` imports
    no module; a plain ``import json`` chooses no name). The tree has no relative imports."""
    found = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            found += [(a.name, a.asname or a.name.split(".")[0]) for a in node.names if a.asname]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            found += [
                (f"{node.module}.{a.name}", a.asname or a.name)
                for a in node.names
                if f"{node.module}.{a.name}" in modules()
            ]
    return found
