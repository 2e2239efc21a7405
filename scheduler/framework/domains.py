"""Each node row's domain of a topology key, and what follows from that alone. Pure, per session.

A key's domains are the values its node label takes, numbered as first seen; rows without the
label get one more number (``size``), a domain that never counts (see ``topology``). Everything
here is worked out once per key and kept: node labels do not change within a session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot

__all__ = ["Domains", "Ids"]

Ids = npt.NDArray[np.intp]


class Domains:
    def __init__(self, nodes: Sequence[snapshot.Node]) -> None:
        self.nodes = nodes
        self._ids: dict[str, tuple[Ids, int]] = {}
        self._identity: set[str] = set()  # keys whose domains are the rows themselves
        self._sizes: dict[str, Ids] = {}  # key → rows per domain
        self._rows_of: dict[str, list[Ids]] = {}

    def ids(self, key: str) -> tuple[Ids, int]:
        """(each row's domain of ``key``, the number of domains); rows without the label get that number."""
        found = self._ids.get(key)
        if found is None:
            values: dict[str, int] = {}
            raw = [node.labels.get(key) for node in self.nodes]
            for value in raw:
                if value is not None and value not in values:
                    values[value] = len(values)
            size = len(values)
            ids = np.array([size if v is None else values[v] for v in raw], dtype=np.intp)
            found = self._ids[key] = (ids, size)
            if size == len(raw) and bool((ids == np.arange(size)).all()):
                self._identity.add(key)  # one domain per row, in row order (the hostname)
        return found

    def present(self, key: str, rows: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Which domains of ``key`` (size + 1 entries, the last: rows without the label) hold one
        of ``rows``; when most rows are, worked out from the few that are not."""
        ids, size = self.ids(key)
        sizes = self._sizes_of(key)
        left = len(rows) - int(np.count_nonzero(rows))
        if left * 2 < len(rows):  # most rows: the domains not all of whose rows are left out
            return np.bincount(ids[np.flatnonzero(~rows)], minlength=size + 1) < sizes if left else sizes > 0
        found = np.zeros(size + 1, dtype=bool)
        found[ids[rows]] = True
        return found

    def rows_of(self, key: str) -> list[Ids]:
        """The rows of each domain of ``key`` (not of rows without it), ascending; worked out once."""
        return self.groups(key)[:-1]

    def groups(self, key: str) -> list[Ids]:
        """``rows_of``, then the rows without ``key`` (size + 1 entries); worked out once."""
        found = self._rows_of.get(key)
        if found is None:
            order = np.argsort(self.ids(key)[0], kind="stable")
            found = self._rows_of[key] = np.split(order, np.cumsum(self._sizes_of(key))[:-1])
        return found

    def _sizes_of(self, key: str) -> Ids:
        """How many rows each domain of ``key`` has (size + 1 entries); worked out once."""
        sizes = self._sizes.get(key)
        if sizes is None:
            ids, size = self.ids(key)
            sizes = self._sizes[key] = np.bincount(ids, minlength=size + 1)
        return sizes

    def identity(self, key: str) -> bool:
        """Whether each row is a domain of ``key`` of its own, in row order (the hostname, as a rule)."""
        self.ids(key)
        return key in self._identity

    def per_row(self, values: npt.NDArray[Any], key: str) -> npt.NDArray[Any]:
        """``values`` per domain of ``key`` (size + 1 entries) spread over the rows: each row's own domain's."""
        if key in self._identity:
            return values[:-1]
        return values.take(self.ids(key)[0])
