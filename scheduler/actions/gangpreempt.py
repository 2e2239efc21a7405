"""gangpreempt: preempt at gang level within a queue (Volcano v1.15's ``gangpreempt``, opt-in).

Preemptors are ``preempt.starving``'s jobs, in queue then job order. Candidates are running,
preemptable tasks of OTHER jobs of the same queue whose job priority is strictly lower (and that
the plugins allow: conformance, drf). ``gangevicting.run`` takes surplus replicas first, whole
victim jobs only when those are not enough (``allowWholeBundle``, default true), and evicts
nothing unless the preemptor's whole gang is then placed. Arguments come from the conf's
``configurations`` entry ``gangpreempt``: ``allowWholeBundle``, ``maxDomains`` (accepted; one
domain here).
"""

from __future__ import annotations

from bridge import defaults
from scheduler.actions import bundles, gangevicting, preempt
from scheduler.api import snapshot
from scheduler.framework import config, placement, session, tiers

__all__ = ["allow_whole", "execute"]


def allow_whole(option: config.PluginOption) -> bool:
    """The action's ``allowWholeBundle`` argument (``SchedulerConfigError`` if not a boolean);
    ``maxDomains`` must be a number (Volcano falls back to its default below 1; so do we)."""
    option.number("maxDomains", defaults.GANG_EVICTION_MAX_DOMAINS)
    return option.flag("allowWholeBundle", defaults.GANG_EVICTION_ALLOW_WHOLE_BUNDLE)


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    whole = allow_whole(ssn.config.action("gangpreempt"))
    for job in preempt.starving(ssn, plugins):
        info = ssn.job(job)
        candidates = [
            t
            for t in ssn.snapshot.tasks.values()
            if t.job != job
            and ssn.job(t.job).queue == info.queue
            and ssn.job(t.job).priority < info.priority
            and t.preemptable
            and ssn.status[t.key] is snapshot.TaskStatus.RUNNING
        ]
        victims = sorted(sorted({t.job for t in candidates}), key=plugins.job_order)
        rank = {key: -i for i, key in enumerate(victims)}  # the job scheduled last is evicted first

        def policy(bundle: bundles.Bundle, rank: dict[str, int] = rank) -> int:
            return rank[bundle.job]

        def why(bundle: bundles.Bundle, mine: int = info.priority) -> str:
            return f"{bundle.why}; job priority {ssn.job(bundle.job).priority} < {mine}"

        gangevicting.run(
            ssn,
            plugins,
            placer,
            job,
            candidates,
            action="gangpreempt",
            reason="Preempted",
            policy=policy,
            why=why,
            allow_whole=whole,
        )
