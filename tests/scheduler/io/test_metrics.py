"""metrics: Volcano's names through prometheus_client, one registry per instance, /healthz."""

from __future__ import annotations

import asyncio
import contextlib

from prometheus_client import parser

from bridge.k8s import watching
from scheduler import build
from scheduler.api import plan
from scheduler.io import metrics, status

QUEUE = plan.QueueVerdict("default", "Open", 1, 2, 3, 0, 0, {"cpu": "1500m", "memory": "1Gi"})


def _samples(m: metrics.Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in parser.text_string_to_metric_families(m.render())
        for s in family.samples
    }


def _cycle(m: metrics.Metrics, *, seconds: float, bound: int = 3) -> None:
    m.cycle(plan.Plan((), (), (QUEUE,), ()), seconds=seconds, bound=bound, failed=0, writes=2)


def test_the_status_writers_queue_and_parked_gangs_are_exposed() -> None:
    m = metrics.Metrics()
    m.status = status.Counts(requests=7, queued=12, coalesced=4, dropped=1)
    m.status_depth = lambda: 5
    m.parked = 2
    samples = _samples(m)
    assert samples[("vbridge_scheduler_status_writes_total", ())] == 7  # requests made, not queued
    assert samples[("vbridge_scheduler_status_queue_depth", ())] == 5
    assert samples[("vbridge_scheduler_status_coalesced_total", ())] == 4
    assert samples[("vbridge_scheduler_status_dropped_total", ())] == 1
    assert samples[("vbridge_scheduler_parked_gangs", ())] == 2


def test_whole_cycles_are_counted_in_seconds_around_one() -> None:
    m = metrics.Metrics()
    for seconds in (0.2, 1.5, 0.3, 1.0):
        _cycle(m, seconds=seconds)
    samples = _samples(m)
    assert samples[("vbridge_scheduler_cycle_duration_seconds_bucket", (("le", "1"),))] == 3
    assert samples[("vbridge_scheduler_cycle_duration_seconds_bucket", (("le", "2.5"),))] == 4
    assert samples[("vbridge_scheduler_cycle_duration_seconds_count", ())] == 4


def test_exposition_has_volcanos_names_and_values() -> None:
    m = metrics.Metrics()
    _cycle(m, seconds=0.012)
    samples = _samples(m)
    assert samples[("volcano_schedule_attempts_total", (("result", "scheduled"),))] == 3
    assert samples[("volcano_queue_allocated_milli_cpu", (("queue_name", "default"),))] == 1500
    assert samples[("volcano_queue_allocated_memory_bytes", (("queue_name", "default"),))] == 2**30
    assert samples[("volcano_queue_pod_group_inqueue_count", (("queue_name", "default"),))] == 2
    assert samples[("volcano_total_preemption_attempts", ())] == 0
    assert samples[("vbridge_scheduler_cycles_total", ())] == 1
    assert samples[("vbridge_scheduler_cycle_duration_seconds_sum", ())] == 0.012
    assert samples[("vbridge_scheduler_status_writes_total", ())] == 2
    assert samples[("vbridge_scheduler_build_info", (("core", build.core()),))] == 1
    text = m.render()
    assert "# TYPE volcano_e2e_scheduling_latency_milliseconds histogram" in text
    assert "# TYPE volcano_schedule_attempts_total counter" in text
    assert "_created" not in text  # Volcano's counters have no creation series


def test_latency_buckets_are_volcanos_and_a_boundary_is_inclusive() -> None:
    m = metrics.Metrics()
    m.observe_e2e(20.0)  # exactly on the 20 ms bound
    m.observe_e2e(20.1)
    m.observe_e2e(3000.0)  # beyond the last bound: only +Inf
    samples = _samples(m)
    name = "volcano_e2e_scheduling_latency_milliseconds_bucket"
    bounds = sorted(float(dict(labels)["le"]) for n, labels in samples if n == name)
    assert bounds == [5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0, float("inf")]
    assert samples[(name, (("le", "10"),))] == 0
    assert samples[(name, (("le", "20"),))] == 1
    assert samples[(name, (("le", "40"),))] == 2
    assert samples[(name, (("le", "2560"),))] == 2
    assert samples[(name, (("le", "+Inf"),))] == 3
    assert samples[("volcano_e2e_scheduling_latency_milliseconds_count", ())] == 3


def test_each_instance_has_its_own_registry_and_queues_follow_the_last_cycle() -> None:
    first, second = metrics.Metrics(), metrics.Metrics()
    _cycle(first, seconds=0.001, bound=5)
    assert _samples(second)[("volcano_schedule_attempts_total", (("result", "scheduled"),))] == 0
    first.cycle(plan.Plan((), (), (), ()), seconds=0.001, bound=0, failed=1, writes=0)
    samples = _samples(first)
    assert samples[("volcano_schedule_attempts_total", (("result", "scheduled"),))] == 5
    assert samples[("volcano_schedule_attempts_total", (("result", "error"),))] == 1
    assert not [key for key in samples if key[0].startswith("volcano_queue_")]  # the queue is gone


async def _get(port: int, path: str) -> tuple[str, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    answer = (await reader.read()).decode()
    writer.close()
    await writer.wait_closed()
    head, _, body = answer.partition("\r\n\r\n")
    return head, body


def test_server_answers_metrics_and_healthz() -> None:
    async def scenario() -> list[tuple[str, str]]:
        m = metrics.Metrics()
        _cycle(m, seconds=0.012)
        health = [True, False]
        server = asyncio.create_task(metrics.serve(m, port=0, healthy=lambda: health.pop(0)))
        try:
            while not m.port:
                await asyncio.sleep(0.01)
            return [await _get(m.port, p) for p in ("/metrics", "/healthz", "/healthz?verbose", "/nope")]
        finally:
            server.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await server

    (metrics_head, body), (ok_head, ok), (bad_head, bad), (missing, _) = asyncio.run(scenario())
    assert metrics_head.startswith("HTTP/1.1 200") and "version=0.0.4" in metrics_head
    assert 'volcano_schedule_attempts_total{result="scheduled"} 3.0' in body
    assert ok_head.startswith("HTTP/1.1 200") and ok == "ok"
    assert bad_head.startswith("HTTP/1.1 503") and bad == "unhealthy"
    assert missing.startswith("HTTP/1.1 404")


def test_the_watches_counts_are_exported_by_path_and_reason() -> None:
    stats = watching.Stats()
    stats.lists[("/api/v1/pods", "first")] += 1
    stats.lists[("/api/v1/pods", "gone")] += 2
    stats.resumes[("/api/v1/nodes", "end")] += 5
    stats.skipped["/apis/batch.volcano.sh/v1alpha1/jobs"] += 1
    m = metrics.Metrics(watches=stats)
    samples = _samples(m)
    relists = "vbridge_watch_relists_total"
    assert samples[(relists, (("reason", "first"), ("resource", "/api/v1/pods")))] == 1
    assert samples[(relists, (("reason", "gone"), ("resource", "/api/v1/pods")))] == 2
    assert samples[("vbridge_watch_resumes_total", (("reason", "end"), ("resource", "/api/v1/nodes")))] == 5
    assert samples[("vbridge_watch_skipped_total", (("resource", "/apis/batch.volcano.sh/v1alpha1/jobs"),))] == 1
    stats.lists[("/api/v1/pods", "gone")] += 1
    assert _samples(m)[(relists, (("reason", "gone"), ("resource", "/api/v1/pods")))] == 3  # read at each scrape
