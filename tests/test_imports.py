"""Aliases that tell the truth: a module goes by one name everywhere, and a name means one module.

Every ``import x as y`` and every ``from package import module [as name]`` of one of our modules,
in the product, the tests, the benchmarks and the tools, is read with ``ast``
(``tests.support.sources.imports``). A module imported under two names (``plugin`` here, ``base``
there) makes a reader wonder whether they are two modules; a name given to two modules
(``registry``, ``podgroup``, ``certs``) makes them guess which one a file means. Where basenames
clash, the alias says which (``cluster_certs``, ``cert_controller``; ``bridge.certs`` keeps
``certs``), and is the same in every file.
"""

from __future__ import annotations

import ast
import collections
import functools
from collections.abc import Iterable

from tests.support import sources

TREES = ("bridge", "webhooks", "scheduler", "vbridge", "tests", "bench", "tools")

# name -> the modules allowed to share it, and why.
SHARED: dict[str, frozenset[str]] = {}  # a name more than one module may be bound to, with the reason

Row = tuple[str, str, str]  # file, module, the name it is bound to


@functools.cache
def _rows() -> list[Row]:
    rows = []
    for top in TREES:
        for path in sorted((sources.ROOT / top).rglob("*.py")):
            relative = str(path.relative_to(sources.ROOT))
            rows += [(relative, module, name) for module, name in sources.imports(sources.parse(path))]
    return rows


def _names(rows: Iterable[Row]) -> dict[str, dict[str, list[str]]]:
    """Each module imported under more than one name: name -> the files that use it."""
    seen: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for file, module, name in rows:
        seen[module][name].append(file)
    return {module: dict(names) for module, names in seen.items() if len(names) > 1}


def _modules(rows: Iterable[Row], shared: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """Each name given to more than one module (beyond ``shared``): name -> the modules."""
    seen: dict[str, set[str]] = collections.defaultdict(set)
    for _, module, name in rows:
        seen[name].add(module)
    return {name: sorted(m) for name, m in seen.items() if len(m) > 1 and not m <= shared.get(name, frozenset())}


def test_the_walk_reads_imports() -> None:
    rows = _rows()
    assert len(rows) > 1000
    assert ("bridge/k8s/watching.py", "bridge.k8s.client", "client") in rows
    assert ("scheduler/plugins/gang.py", "scheduler.framework.plugin", "plugin") in rows


def test_a_module_has_one_name() -> None:
    assert _names(_rows()) == {}, "import the module under the name every other file uses"


def test_a_name_means_one_module() -> None:
    assert _modules(_rows(), SHARED) == {}, "an alias that says which module (the same in every file)"


def test_the_shared_names_are_still_needed() -> None:
    """An exception outlives its reason: each is still used by every module it lists."""
    used = collections.defaultdict(set)
    for _, module, name in _rows():
        used[name].add(module)
    assert {name: modules for name, modules in SHARED.items() if not modules <= used[name]} == {}


def test_two_names_and_a_shared_name_are_caught() -> None:
    rows = [
        ("a.py", "scheduler.framework.plugin", "base"),
        ("b.py", "scheduler.framework.plugin", "plugin"),
        ("c.py", "bridge.adapters.base", "base"),
        ("d.py", "bridge.models.base", "base"),
    ]
    assert _names(rows) == {"scheduler.framework.plugin": {"base": ["a.py"], "plugin": ["b.py"]}}
    assert _modules(rows, {}) == {"base": ["bridge.adapters.base", "bridge.models.base", "scheduler.framework.plugin"]}
    shared = {"base": frozenset({"bridge.adapters.base", "bridge.models.base"})}
    assert _modules(rows, shared) == {
        "base": ["bridge.adapters.base", "bridge.models.base", "scheduler.framework.plugin"]
    }
    assert _modules(rows[2:], shared) == {}


def test_imports_reads_both_forms() -> None:
    tree = ast.parse(
        "import numpy as np\nimport json\nfrom typing import Any\n"
        "from bridge import errors, facts as cluster_facts\n"
        "def f():\n    from scheduler.framework import plugin\n"
    )
    assert sources.imports(tree) == [
        ("numpy", "np"),
        ("bridge.errors", "errors"),
        ("bridge.facts", "cluster_facts"),
        ("scheduler.framework.plugin", "plugin"),
    ]
