"""The facts cache: watch events in, Contexts out, rebuilt only when a fact changes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from bridge import facts as cluster_facts
from bridge import queues


def namespace(
    name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}}}


def test_a_context_holds_the_namespace_queues_and_priorities() -> None:
    cache = cluster_facts.Facts()
    cache.apply_namespace("ADDED", namespace("team-a", {"l": "1"}, {"scheduling.volcano.sh/queue-name": "gpu"}))
    cache.apply_queue(
        "ADDED", {"metadata": {"name": "gpu", "annotations": {"vbridge.io/allowed-namespaces": "team-*"}}}
    )
    cache.apply_queue("ADDED", {"metadata": {"name": "old"}, "status": {"state": "Closed"}})
    cache.apply_priority_class("ADDED", {"metadata": {"name": "high"}, "value": 1000})
    ctx = cache.context("team-a", scheduler_name="sched")
    assert (ctx.namespace, ctx.scheduler_name) == ("team-a", "sched")
    assert ctx.namespace_labels == {"l": "1"}
    assert ctx.queues == {
        "gpu": queues.QueueFacts(state="Open", allowed=("team-*",)),
        "old": queues.QueueFacts(state="Closed"),
    }
    assert ctx.priorities == {"high": 1000}
    assert ctx.queue(field=None, annotations=None) == "gpu"  # the namespace's queue, checked and open to it


def test_an_unknown_namespace_has_no_labels_or_annotations() -> None:
    ctx = cluster_facts.Facts().context("nowhere", scheduler_name="volcano")
    assert ctx.namespace_labels == {} and ctx.namespace_annotations == {} and ctx.queues == {}


def test_contexts_are_cached_per_namespace_and_scheduler_until_a_fact_changes() -> None:
    cache = cluster_facts.Facts()
    first = cache.context("team-a", scheduler_name="volcano")
    assert cache.context("team-a", scheduler_name="volcano") is first
    assert cache.context("team-a", scheduler_name="other") is not first
    assert cache.context("team-b", scheduler_name="volcano") is not first
    for apply, obj in [
        (cache.apply_namespace, namespace("team-a", {"x": "y"})),
        (cache.apply_queue, {"metadata": {"name": "q"}}),
        (cache.apply_priority_class, {"metadata": {"name": "p"}, "value": 1}),
    ]:
        before = cache.context("team-a", scheduler_name="volcano")
        apply("MODIFIED", obj)
        after = cache.context("team-a", scheduler_name="volcano")
        assert after is not before
    assert after.namespace_labels == {"x": "y"} and "q" in after.queues and after.priorities == {"p": 1}


def test_deletions_remove_the_fact_and_leave_older_contexts_whole() -> None:
    cache = cluster_facts.Facts()
    cache.apply_namespace("ADDED", namespace("team-a", {"a": "1"}))
    cache.apply_queue("ADDED", {"metadata": {"name": "q"}})
    cache.apply_priority_class("ADDED", {"metadata": {"name": "p"}, "value": 5})
    held = cache.context("team-a", scheduler_name="volcano")
    cache.apply_namespace("DELETED", namespace("team-a"))
    cache.apply_queue("DELETED", {"metadata": {"name": "q"}})
    cache.apply_priority_class("DELETED", {"metadata": {"name": "p"}})
    fresh = cache.context("team-a", scheduler_name="volcano")
    assert fresh.namespace_labels == {} and fresh.queues == {} and fresh.priorities == {}
    assert held.namespace_labels == {"a": "1"} and "q" in held.queues and held.priorities == {"p": 5}


def test_not_synced_until_every_watch_listed() -> None:
    assert cluster_facts.Facts().synced is False


def test_a_queue_read_whose_connection_is_refused_is_an_unread_queue_not_a_crash() -> None:
    class Refusing:
        async def request(self, method: str, path: str) -> dict[str, Any]:
            raise ConnectionRefusedError(111, "refused")

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        cache = cluster_facts.Facts()
        cache._api, cache._loop = Refusing(), loop  # type: ignore[assignment]  # as run() sets them
        assert cache.read_queue("made-a-moment-ago") is None
        assert cache.reads == 0
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
