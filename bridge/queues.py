"""Which queue a job goes to, and whether it may. Pure: cluster facts come in a Context.

Precedence: the job's own field > the job's ``scheduling.volcano.sh/queue-name`` annotation >
the namespace's annotation > ``default``. A queue that does not exist, is not Open, or does not
list the job's namespace in its ``vbridge.io/allowed-namespaces`` annotation is refused with a
message naming the queues the namespace may use (Volcano drops such jobs silently). ``root``,
the top of the queue hierarchy, takes no jobs of any kind and is never offered as usable
(Volcano's jobs-validate: "can not submit job to root queue"); nor does a queue that other
queues name as their ``spec.parent``: only leaf queues take jobs (Volcano's capacity plugin with
its hierarchy refuses them at scheduling; we say so at admission).

``check`` is admission's full test (exists, Open, admits the namespace). ``refusal`` is the
part that holds on every other path, whatever became of the queue since: the reconcilers
never make or move a group into a queue that does not admit its namespace, and the scheduler
never schedules one (``scheduler.api.building``). ``admits`` is the one pattern match both use.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping

from bridge import defaults, errors, keys

__all__ = ["DEFAULT", "QueueFacts", "admits", "check", "patterns", "refusal", "resolve"]

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
        state = status.get("state") if isinstance(status, dict) else None
        spec = queue.get("spec") or {}
        parent = spec.get("parent") if isinstance(spec, dict) else None
        return cls(state=str(state or "Open"), allowed=patterns(annotations), parent=str(parent) if parent else None)

    def admits(self, namespace: str) -> bool:
        return admits(self.allowed, namespace)


def patterns(annotations: Mapping[str, str] | None) -> tuple[str, ...]:
    """The namespace patterns of a queue's ``vbridge.io/allowed-namespaces`` annotation."""
    raw = (annotations or {}).get(keys.ALLOWED_NAMESPACES, "")
    return tuple(p.strip() for p in str(raw).split(",") if p.strip())


def admits(allowed: tuple[str, ...], namespace: str) -> bool:
    """Whether a queue with these namespace patterns admits ``namespace`` (none: every namespace)."""
    return not allowed or any(fnmatch.fnmatchcase(namespace, p) for p in allowed)


def resolve(
    *, field: str | None, job_annotations: Mapping[str, str] | None, namespace_annotations: Mapping[str, str] | None
) -> str:
    return (
        field
        or (job_annotations or {}).get(keys.QUEUE_NAME)
        or (namespace_annotations or {}).get(keys.QUEUE_NAME)
        or DEFAULT
    )


def refusal(name: str, *, namespace: str, queues: Mapping[str, QueueFacts]) -> str | None:
    """Why ``namespace`` may not have a group in queue ``name``, or None. A queue not known (yet)
    refuses nothing here: the scheduler does not schedule into a missing queue anyway."""
    facts = queues.get(name)
    if facts is None or facts.admits(namespace):
        return None
    return f"queue {name!r} does not admit namespace {namespace!r}{_hint(namespace, queues)}"


def _hint(namespace: str, queues: Mapping[str, QueueFacts]) -> str:
    parents = _parents(queues)
    usable = sorted(
        q
        for q, f in queues.items()
        if q != defaults.ROOT_QUEUE and q not in parents and f.state == "Open" and f.admits(namespace)
    )
    return f"; queues open to namespace {namespace!r}: {', '.join(usable) or 'none'}"


def _parents(queues: Mapping[str, QueueFacts]) -> set[str]:
    return {f.parent for f in queues.values() if f.parent}


def check(name: str, *, namespace: str, queues: Mapping[str, QueueFacts]) -> None:
    """Raise :class:`errors.QueueError` unless ``namespace`` may submit to queue ``name`` now."""
    hint = _hint(namespace, queues)
    parents = _parents(queues)
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
    refused = refusal(name, namespace=namespace, queues=queues)
    if refused is not None:
        raise errors.QueueError(refused)
