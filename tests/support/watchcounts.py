"""What ``bridge.k8s.watching.STATS`` gained for one watched path since a copy taken earlier."""

from __future__ import annotations

from bridge.k8s import watching


def gained(before: watching.Stats, path: str) -> dict[str, int]:
    """``list:<reason>``, ``resume:<reason>``, ``skipped`` and ``bookmarks`` counts for ``path``."""
    now = watching.STATS
    out = {
        f"list:{r}": now.lists[(path, r)] - before.lists[(path, r)]
        for r in (watching.FIRST, watching.GONE, watching.ERROR)
    }
    out |= {f"resume:{r}": now.resumes[(path, r)] - before.resumes[(path, r)] for r in ("end", "dropped")}
    out["skipped"] = now.skipped[path] - before.skipped[path]
    out["bookmarks"] = now.bookmarks[path] - before.bookmarks[path]
    return out


def listed(before: watching.Stats) -> set[str]:
    """The paths some watch has listed for the first time since ``before``."""
    now = watching.STATS
    return {
        path for (path, reason), n in now.lists.items() if reason == watching.FIRST and n > before.lists[(path, reason)]
    }
