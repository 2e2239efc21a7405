"""Which queue a job goes to, and whether it may. Pure: cluster facts come in a Context.

Precedence: the job's own field > the job's ``scheduling.volcano.sh/queue-name`` annotation >
the namespace's annotation > ``default``. A queue that does not exist, is not Open, or does not
list the job's namespace in its ``vbridge.io/allowed-namespaces`` annotation is refused with a
message naming the queues the namespace may use (Volcano drops such jobs silently). ``root``,
the top of the queue hierarchy, takes no jobs of any kind and is never offered as usable
(Volcano's jobs-validate: "can not submit job to root queue"); nor does a queue that other
queues name as their ``spec.parent``: only leaf queues take jobs (Volcano's capacity plugin with
its hierarchy refuses them at scheduling; we say so at admission).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping

from bridge import defaults, errors, keys

__all__ = ["QueueFacts", "check", "resolve"]

DEFAULT = "default"


@dataclasses.dataclass(frozen=True)
class QueueFacts:
    state: str = "Open"  # an unset status counts as Open: Volcano's controller opens new queues
    allowed: tuple[str, ...] = ()  # namespace patterns; empty means every namespace
    parent: str | None = None  # spec.parent

    @classmethod
    def from_api(cls, queue: Mapping[str, object]) -> QueueFacts:
        meta = queue.get("metadata") or {}
        status = queue.get("status") or {}
        annotations = (meta.get("annotations") if isinstance(meta, dict) else None) or {}
        raw = annotations.get(keys.ALLOWED_NAMESPACES, "")
        state = status.get("state") if isinstance(status, dict) else None
        spec = queue.get("spec") or {}
        parent = spec.get("parent") if isinstance(spec, dict) else None
        allowed = tuple(p.strip() for p in raw.split(",") if p.strip())
        return cls(state=state or "Open", allowed=allowed, parent=str(parent) if parent else None)

    def admits(self, namespace: str) -> bool:
        return not self.allowed or any(fnmatch.fnmatchcase(namespace, p) for p in self.allowed)


def resolve(
    *, field: str | None, job_annotations: Mapping[str, str] | None, namespace_annotations: Mapping[str, str] | None
) -> str:
    return (
        field
        or (job_annotations or {}).get(keys.QUEUE_NAME)
        or (namespace_annotations or {}).get(keys.QUEUE_NAME)
        or DEFAULT
    )


def check(name: str, *, namespace: str, queues: Mapping[str, QueueFacts]) -> None:
    """Raise :class:`errors.QueueError` unless ``namespace`` may submit to queue ``name`` now."""
    parents = {f.parent for f in queues.values() if f.parent}
    usable = sorted(
        q
        for q, f in queues.items()
        if q != defaults.ROOT_QUEUE and q not in parents and f.state == "Open" and f.admits(namespace)
    )
    hint = f"; queues open to namespace {namespace!r}: {', '.join(usable) or 'none'}"
    if name == defaults.ROOT_QUEUE:
        raise errors.QueueError(f"can not submit job to root queue {name!r}: it only parents other queues{hint}")
    facts = queues.get(name)
    if facts is None:
        raise errors.QueueError(f"queue {name!r} does not exist{hint}")
    if name in parents:
        children = ", ".join(sorted(q for q, f in queues.items() if f.parent == name))
        raise errors.QueueError(
            f"queue {name!r} is not a leaf queue (it parents {children}): only leaf queues take jobs{hint}"
        )
    if facts.state != "Open":
        raise errors.QueueError(f"queue {name!r} is {facts.state}, not Open: it takes no new jobs{hint}")
    if not facts.admits(namespace):
        raise errors.QueueError(f"queue {name!r} does not admit namespace {namespace!r}{hint}")
