"""Prometheus text metrics with Volcano's names, and a tiny ``/metrics`` + ``/healthz`` server.

Names follow Volcano's ``pkg/scheduler/metrics`` (namespace ``volcano``) so existing
dashboards keep working: ``volcano_e2e_scheduling_latency_milliseconds`` (histogram,
exponential buckets 5 ms × 2¹⁰), ``volcano_schedule_attempts_total{result}``,
``volcano_queue_allocated_milli_cpu{queue_name}``, ``volcano_queue_pod_group_*_count`` and
friends. Our own additions are prefixed ``vbridge_scheduler_``.

The server is plain asyncio (one request per connection), bound to loopback by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable

from scheduler.api import plan

__all__ = ["BUCKETS", "Metrics", "serve"]

BUCKETS = tuple(5.0 * 2**i for i in range(10))


@dataclasses.dataclass
class Histogram:
    counts: list[int] = dataclasses.field(default_factory=lambda: [0] * len(BUCKETS))
    total: int = 0
    sum: float = 0.0

    def observe(self, value: float) -> None:
        self.total += 1
        self.sum += value
        for i, bound in enumerate(BUCKETS):
            if value <= bound:
                self.counts[i] += 1


class Metrics:
    def __init__(self) -> None:
        self.e2e = Histogram()
        self.attempts: dict[str, int] = {"scheduled": 0, "unschedulable": 0, "error": 0}
        self.preemption_attempts = 0
        self.preemption_victims = 0
        self.unschedule_jobs = 0
        self.queues: dict[str, plan.QueueVerdict] = {}
        self.cycles = 0
        self.binds_failed = 0
        self.writes = 0
        self.leader = 0
        self.port = 0  # the bound metrics port, once serving

    def cycle(self, verdicts: plan.Plan, *, seconds: float, bound: int, failed: int, writes: int) -> None:
        self.cycles += 1
        self.e2e.observe(seconds * 1000.0)
        self.attempts["scheduled"] += bound
        self.attempts["error"] += failed
        self.attempts["unschedulable"] += sum(1 for v in verdicts.pods if v.reason != "Scheduled")
        evictions = verdicts.evictions()
        if evictions:
            self.preemption_attempts += 1
        self.preemption_victims = len(evictions)
        self.unschedule_jobs = sum(
            1 for g in verdicts.podgroups if any(c.type == "Unschedulable" for c in g.conditions)
        )
        self.queues = {q.name: q for q in verdicts.queues}
        self.binds_failed += failed
        self.writes += writes

    def render(self) -> str:
        out: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} {kind}")

        name = "volcano_e2e_scheduling_latency_milliseconds"
        family(name, "histogram", "E2e scheduling latency in milliseconds (scheduling algorithm + binding)")
        for bound, count in zip(BUCKETS, self.e2e.counts, strict=True):
            out.append(f'{name}_bucket{{le="{bound:g}"}} {count}')
        out.append(f'{name}_bucket{{le="+Inf"}} {self.e2e.total}')
        out.append(f"{name}_sum {self.e2e.sum:.3f}")
        out.append(f"{name}_count {self.e2e.total}")
        family("volcano_schedule_attempts_total", "counter", "Number of attempts to schedule pods, by the result")
        for result, count in self.attempts.items():
            out.append(f'volcano_schedule_attempts_total{{result="{result}"}} {count}')
        family("volcano_total_preemption_attempts", "counter", "Total preemption attempts in the cluster till now")
        out.append(f"volcano_total_preemption_attempts {self.preemption_attempts}")
        family("volcano_pod_preemption_victims", "gauge", "Number of selected preemption victims")
        out.append(f"volcano_pod_preemption_victims {self.preemption_victims}")
        family("volcano_unschedule_job_count", "gauge", "Number of jobs could not be scheduled")
        out.append(f"volcano_unschedule_job_count {self.unschedule_jobs}")
        self._queues(family, out)
        family("vbridge_scheduler_cycles_total", "counter", "Scheduling cycles run")
        out.append(f"vbridge_scheduler_cycles_total {self.cycles}")
        family("vbridge_scheduler_status_writes_total", "counter", "Status, condition and event requests made")
        out.append(f"vbridge_scheduler_status_writes_total {self.writes}")
        family("vbridge_scheduler_leader", "gauge", "1 while this instance may bind")
        out.append(f"vbridge_scheduler_leader {self.leader}")
        return "\n".join(out) + "\n"

    def _queues(self, family: Callable[[str, str, str], None], out: list[str]) -> None:
        from scheduler.api import resources  # numpy: loaded with the core, after start-up's lists

        family("volcano_queue_allocated_milli_cpu", "gauge", "Allocated CPU count for one queue")
        for name, q in sorted(self.queues.items()):
            cpu = resources.parse(dict(q.allocated)).cpu  # the core keeps CPU in millicores
            out.append(f'volcano_queue_allocated_milli_cpu{{queue_name="{name}"}} {cpu:g}')
        family("volcano_queue_allocated_memory_bytes", "gauge", "Allocated memory for one queue")
        for name, q in sorted(self.queues.items()):
            memory = resources.parse(dict(q.allocated)).memory
            out.append(f'volcano_queue_allocated_memory_bytes{{queue_name="{name}"}} {memory:g}')
        for phase in ("inqueue", "pending", "running", "unknown", "completed"):
            metric = f"volcano_queue_pod_group_{phase}_count"
            family(metric, "gauge", f"The number of {phase.capitalize()} PodGroup in this queue")
            for name, q in sorted(self.queues.items()):
                out.append(f'{metric}{{queue_name="{name}"}} {getattr(q, phase)}')


async def serve(
    metrics: Metrics, *, port: int, host: str = "127.0.0.1", healthy: Callable[[], bool] = lambda: True
) -> None:
    """Serve until cancelled; ``port`` 0 picks a free one (see ``metrics.port`` once bound)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 5.0)
            while (await asyncio.wait_for(reader.readline(), 5.0)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.decode("latin-1").split()
            target = parts[1].split("?")[0] if len(parts) > 1 else ""
            if target == "/metrics":
                status, body, kind = "200 OK", metrics.render(), "text/plain; version=0.0.4"
            elif target == "/healthz":
                ok = healthy()
                status, body, kind = (
                    ("200 OK" if ok else "503 Service Unavailable"),
                    ("ok" if ok else "unhealthy"),
                    "text/plain",
                )
            else:
                status, body, kind = "404 Not Found", "not found", "text/plain"
            data = body.encode()
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + data)
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, host, port)
    metrics.port = server.sockets[0].getsockname()[1]
    async with server:
        await server.serve_forever()
