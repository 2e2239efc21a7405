"""bridge.k8s.watching: a relist reports only the difference; backoff grows, is capped and jittered."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from typing import Any

import orjson
import pytest

from bridge import errors
from bridge.k8s import views, watching
from scheduler.io import reads
from tests.support import scriptedapi, watchcounts


def obj(name: str, rv: str, namespace: str | None = "ns") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def test_first_list_reports_everything_as_added() -> None:
    known: dict[str, str] = {}
    events = watching.relist(known, [obj("a", "1"), obj("b", "2")])
    assert [(k, o["metadata"]["name"]) for k, o in events] == [("ADDED", "a"), ("ADDED", "b")]
    assert known == {"ns/a": "1", "ns/b": "2"}


def test_relist_reports_changed_and_vanished_objects_only() -> None:
    known = {"ns/a": "1", "ns/b": "2", "/node-1": "3"}
    events = watching.relist(known, [obj("a", "1"), obj("b", "5"), obj("c", "6")])
    assert [(k, o["metadata"]["name"]) for k, o in events] == [
        ("MODIFIED", "b"),
        ("ADDED", "c"),
        ("DELETED", "node-1"),
    ]
    deleted = events[-1][1]["metadata"]
    assert deleted["namespace"] is None  # cluster-scoped: no namespace in the stub
    assert known == {"ns/a": "1", "ns/b": "5", "ns/c": "6"}


def test_a_namespaced_deletion_stub_keeps_its_namespace() -> None:
    known = {"team/x": "1"}
    assert watching.relist(known, []) == [("DELETED", {"metadata": {"namespace": "team", "name": "x"}})]
    assert known == {}


def test_backoff_grows_to_its_cap_and_jitter_stays_below_the_delay() -> None:
    backoff = watching.Backoff(first=0.2, most=10.0, factor=2.0)
    delays = []
    delay = 0.0
    for _ in range(10):
        delay = backoff.next(delay)
        delays.append(delay)
    assert delays[:4] == [0.2, 0.4, 0.8, 1.6]
    assert delays[-1] == 10.0
    rng = random.Random(7)
    jittered = [backoff.jittered(4.0, rng) for _ in range(200)]
    assert all(2.0 <= j <= 4.0 for j in jittered)
    assert len(set(jittered)) > 100  # spread, so retrying watchers do not arrive together


# -- the watch against a scripted server on loopback ------------------------------------------


class Seen:
    """What ``follow`` handed on, with an event per arrival to wait on."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.synced = 0
        self.arrived = asyncio.Event()

    def handle(self, kind: str, obj: dict[str, Any]) -> None:
        self.events.append((kind, obj["metadata"]["name"]))
        self.arrived.set()

    def on_synced(self) -> None:
        self.synced += 1
        self.arrived.set()

    async def until(self, events: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.events) < events:
                self.arrived.clear()
                await self.arrived.wait()


def run_follow(
    lists: list[bytes],
    watches: list[scriptedapi.Stream],
    requests: int,
    view: views.View | None = None,
    events: int = 0,
) -> tuple[scriptedapi.ScriptedApi, Seen]:
    """Follow the scripted collection until the server has answered ``requests`` requests and
    ``events`` events were handed on; then stop."""
    seen = Seen()

    async def main() -> scriptedapi.ScriptedApi:
        async with scriptedapi.serving(lists, watches) as (server, api):
            task = asyncio.create_task(
                watching.follow(
                    api,
                    scriptedapi.PATH,
                    seen.handle,
                    on_synced=seen.on_synced,
                    view=view,
                    backoff=watching.Backoff(first=0.01, most=0.05),
                )
            )
            try:
                await server.wait_for(requests)
                await seen.until(events)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            return server

    return asyncio.run(main()), seen


def counts(before: watching.Stats) -> dict[str, int]:
    return watchcounts.gained(before, scriptedapi.PATH)


def snapshot() -> watching.Stats:
    return watching.STATS.copy()


def test_bookmarks_and_normal_ends_resume_without_a_list() -> None:
    """The probe's bug: a pod bookmark (``spec.containers: null``) through the pod view."""
    before = snapshot()
    streams = [
        scriptedapi.Stream([scriptedapi.event("ADDED", "b", "11"), scriptedapi.bookmark("20")]),
        scriptedapi.Stream([scriptedapi.bookmark("30")]),
        scriptedapi.Stream(
            [scriptedapi.event("MODIFIED", "a", "31", spec={"containers": []}), scriptedapi.bookmark("40")]
        ),
        scriptedapi.Stream([scriptedapi.bookmark("50")]),
    ]
    server, seen = run_follow([scriptedapi.listed("10", scriptedapi.thing("a", "5"))], streams, 6, reads.PODS, 3)
    assert len(server.list_requests) == 1
    assert server.watch_versions == ["10", "20", "30", "40", "50"]
    assert seen.events == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a")]
    assert seen.synced == 1
    assert counts(before) == {
        "list:first": 1,
        "list:gone": 0,
        "list:error": 0,
        "resume:end": 4,
        "resume:dropped": 0,
        "skipped": 0,
        "bookmarks": 4,
    }


def test_a_dropped_stream_and_a_server_error_resume_from_the_last_version() -> None:
    before = snapshot()
    streams = [
        scriptedapi.Stream([scriptedapi.event("ADDED", "b", "11")], "drop"),
        scriptedapi.Stream([], 503),
        scriptedapi.Stream([scriptedapi.event("DELETED", "a", "12")], "drop"),
    ]
    server, seen = run_follow([scriptedapi.listed("10", scriptedapi.thing("a", "5"))], streams, 5, events=3)
    assert len(server.list_requests) == 1
    assert server.watch_versions == ["10", "11", "11", "12"]
    assert seen.events == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    assert counts(before)["list:first"] == 1 and counts(before)["resume:dropped"] == 2
    assert counts(before)["list:error"] == 0


def test_410_and_a_refused_watch_list_again_and_report_the_difference() -> None:
    before = snapshot()
    gone = orjson.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
    lists = [
        scriptedapi.listed("10", scriptedapi.thing("a", "5"), scriptedapi.thing("b", "6")),
        scriptedapi.listed("20", scriptedapi.thing("a", "5"), scriptedapi.thing("c", "15")),
        scriptedapi.listed("30", scriptedapi.thing("c", "25")),
    ]
    streams = [scriptedapi.Stream([gone]), scriptedapi.Stream([], 403)]
    server, seen = run_follow(lists, streams, 6, events=6)
    assert len(server.list_requests) == 3
    assert server.watch_versions == ["10", "20", "30"]
    assert seen.events == [
        *[("ADDED", "a"), ("ADDED", "b")],  # the first list
        *[("ADDED", "c"), ("DELETED", "b")],  # after 410: only the difference
        *[("MODIFIED", "c"), ("DELETED", "a")],  # after 403: likewise
    ]
    assert seen.synced == 3
    assert {k: v for k, v in counts(before).items() if k.startswith("list")} == {
        "list:first": 1,
        "list:gone": 1,
        "list:error": 1,
    }


def test_an_undecodable_object_is_skipped_and_reported_once_the_rest_handed_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = snapshot()
    bad = scriptedapi.thing("bad", "7", spec={"containers": 5})
    lists = [
        scriptedapi.listed("10", scriptedapi.thing("a", "5"), bad, scriptedapi.thing("b", "6")),
        scriptedapi.listed("20", scriptedapi.thing("a", "5"), bad, scriptedapi.thing("b", "6")),
    ]
    gone = orjson.dumps({"type": "ERROR", "object": {"code": 410}})
    streams = [
        scriptedapi.Stream(
            [
                scriptedapi.event("MODIFIED", "worse", "12", spec={"containers": "x"}),
                scriptedapi.event("ADDED", "c", "13"),
                b'{"type":"ADDED","object":{"spec":[1,2}}',  # not even JSON: skipped, named by checksum
                scriptedapi.event("DELETED", "a", "14", spec={"containers": "y"}),  # undecodable, still deleted
                gone,
            ]
        ),
    ]
    with caplog.at_level(logging.WARNING, logger="bridge.k8s.watching"):
        server, seen = run_follow(lists, streams, 4, reads.PODS, events=6)
    assert seen.events == [
        *[("ADDED", "a"), ("ADDED", "b")],  # "bad" skipped
        *[("ADDED", "c"), ("DELETED", "a")],  # "worse", the junk skipped; a's deletion undecodable, handed on
        *[("ADDED", "a"), ("DELETED", "c")],  # the relist after 410 leaves "bad" out, not reported again
    ]
    assert server.watch_versions[:2] == ["10", "20"]
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("skipped")]
    assert len(skipped) == 3, skipped  # "bad" once (not again after the relist), "worse", the junk
    assert "ns/bad" in skipped[0] and "spec.containers" in skipped[0]
    assert "MODIFIED ns/worse" in skipped[1]
    assert counts(before)["skipped"] == 3


@pytest.mark.parametrize(
    ("exc", "resume"),
    [
        (errors.ApiError(429, "TooManyRequests", "slow down"), True),
        (errors.ApiError(503, "ServiceUnavailable", ""), True),
        (errors.ApiError(500, "InternalError", "etcd leader changed"), True),
        (errors.ApiError(504, "Timeout", "Too large resource version: 90, current: 80"), False),
        (errors.ApiError(410, "Expired", ""), False),
        (errors.ApiError(403, "Forbidden", ""), False),
        (errors.ApiError(404, "NotFound", ""), False),
        (TimeoutError(), True),
        (ValueError("a page that is no list"), False),
    ],
)
def test_only_passing_trouble_resumes_a_watch(exc: Exception, resume: bool) -> None:
    assert watching.resumable(exc) is resume


def test_a_watch_is_named_by_its_path_and_selectors() -> None:
    assert watching.where("/api/v1/pods") == "/api/v1/pods"
    assert watching.where("/api/v1/pods", {"labelSelector": "a=b", "limit": 5}) == "/api/v1/pods?labelSelector=a=b"
    both = watching.where("/api/v1/pods", {"fieldSelector": "spec.nodeName!=", "labelSelector": "x"})
    assert both == "/api/v1/pods?labelSelector=x&fieldSelector=spec.nodeName!="


def test_410_straight_after_a_list_waits_longer_each_time_before_listing_again() -> None:
    """A server that answers every watch with 410 (its cache behind its lists) is not relisted in a loop."""
    gone = orjson.dumps({"type": "ERROR", "object": {"code": 410}})
    lists = [scriptedapi.listed(str(rv), scriptedapi.thing("a", "5")) for rv in (10, 20, 30, 40)]
    streams = [scriptedapi.Stream([gone]) for _ in range(3)]
    server, seen = run_follow(lists, streams, 7, events=1)
    listed = [t for t, q in zip(server.arrivals, server.requests, strict=True) if q.get("watch") != "true"]
    assert len(listed) == 4
    gaps = [b - a for a, b in itertools.pairwise(listed)]
    first = watching.Backoff().first
    assert gaps[0] >= first * 0.5 and gaps[1] >= first and gaps[2] >= first * 2, gaps  # jittered to ≥ half
    assert seen.events == [("ADDED", "a")] and seen.synced >= 3  # the same object each time: nothing new


def test_a_one_off_list_is_current_and_skips_what_it_cannot_decode(caplog: pytest.LogCaptureFixture) -> None:
    """What ``vbridge list`` and ``job list`` read: the apiserver's latest state, one bad object left out."""
    before = snapshot()
    bad = scriptedapi.thing("bad", "7", spec={"containers": 5})
    body = scriptedapi.listed("9", scriptedapi.thing("a", "5"), bad, scriptedapi.thing("b", "6"))

    async def main() -> tuple[scriptedapi.ScriptedApi, list[dict[str, Any]]]:
        async with scriptedapi.serving([body], []) as (server, api):
            return server, await watching.list_objects(api, scriptedapi.PATH, view=reads.PODS)

    with caplog.at_level(logging.WARNING, logger="bridge.k8s.watching"):
        server, items = asyncio.run(main())
    assert [i["metadata"]["name"] for i in items] == ["a", "b"]
    assert "resourceVersion" not in server.list_requests[0]  # not the watch cache's possibly older copy
    assert counts(before)["skipped"] == 1 and counts(before)["list:first"] == 0  # no watch listed
    assert [r.getMessage() for r in caplog.records if "ns/bad" in r.getMessage()]
