"""gangreclaim: reclaim at gang level across queues (Volcano v1.15's ``gangreclaim``, opt-in).

Reclaimers are ``preempt.starving``'s jobs of queues that are not overused and that the plugins
let reclaim for every pending task (``preemptive``). Candidates are running, preemptable tasks
of OTHER queues that are ``reclaimable``; the plugins of EVERY tier decide which may go
(proportion or capacity: the victim queue is above its deserved share and keeps its guarantee;
conformance). Volcano asks only the first tier that answers, where gang permits everything, and
its proportion has no say in gang-level eviction; here a queue gives back only what it holds
above its deserved share.
Victim queues nearest the reclaimer go first where a plugin orders them (capacity's tree).
``gangevicting.run`` then gives back surplus replicas first and whole jobs only when needed,
and only if the reclaimer's whole gang is then placed. Arguments: the ``gangreclaim`` entry of
``configurations`` (``allowWholeBundle``, ``maxDomains``).
"""

from __future__ import annotations

from scheduler.actions import bundles, gangevicting, gangpreempt, preempt, reclaim
from scheduler.framework import placement, session, tiers

__all__ = ["execute"]


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    whole = gangpreempt.allow_whole(ssn.config.action("gangreclaim"))
    for job in preempt.starving(ssn, plugins):
        mine = ssn.job(job).queue
        if plugins.overused(mine):
            continue
        if not all(plugins.preemptive(mine, ssn.task(t)) for t in ssn.pending_tasks(job)):
            continue
        victims = reclaim.candidates(ssn, mine)

        def policy(bundle: bundles.Bundle, mine: str = mine) -> tuple[object, ...]:
            theirs = ssn.job(bundle.job).queue
            return plugins.victim_queue_order(theirs, mine) if plugins.orders_victims else ()

        def why(bundle: bundles.Bundle) -> str:
            return f"{bundle.why}; reclaimed from queue {ssn.job(bundle.job).queue}"

        gangevicting.run(
            ssn,
            plugins,
            placer,
            job,
            victims,
            action="gangreclaim",
            reason="Reclaimed",
            policy=policy,
            why=why,
            allow_whole=whole,
            every_tier=True,  # the queue-share plugins (tier 2 by default) always have their say
        )
