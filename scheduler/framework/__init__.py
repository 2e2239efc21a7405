"""The scheduling framework, as Volcano's ``pkg/scheduler/framework``: what actions and plugins share.

- ``config``: ``volcano-scheduler.conf`` parsed into a ``SchedulerConfig``;
- ``session``: one cycle's mutable state over a snapshot; changed only through ``statement``;
- ``state``: the session's named parts (node rows, counts, allocations, holds, what was
  committed, diagnostics), each with its own contract;
- ``domains``: each node row's domain of a topology key (the values of that node label);
- ``topology``: pods per node row and topology domain that pod affinity and topology spread
  count, kept current as the session places pods;
- ``statement``: all-or-nothing groups of allocations, pipelines and evictions;
- ``plugin``: the plugin base class and the value types its hooks return;
- ``tiers``: how the plugins' answers combine, tier by tier;
- ``feasibility``: which gangs can never run on this cluster's nodes (computed once per cycle);
- ``placement``: where one task or a run of alike tasks fits (predicates, scores, caches);
- ``apart``: a gang kept one pod per node by its own hostname anti-affinity, placed in one step;
- ``together``: a gang held in one domain by its own pod affinity, placed by node score there;
- ``counted``: a gang whose one domain check is hard topology spread on its own pods, placed
  in one step under a rule the plugin gives;
- ``scored``: a gang only domain scores follow (preferred pod affinity, soft spread), placed
  from a few candidate rows per domain, the plugins' scores split into parts;
- ``lookahead``: a task's scores on candidate rows after more copies (for the batched paths);
- ``ranking``: integer ranking keys for nodes and jobs;
- ``verdicts``: closing a session into its plan's conditions, counts and events.

The framework imports ``scheduler.api`` and nothing from ``actions`` or ``plugins``: ``tiers``
is handed the plugin registry, and ``config`` the known action and plugin names, by the
layers above (``cycle``, ``configure``).
"""

__all__ = [
    "apart",
    "config",
    "counted",
    "domains",
    "feasibility",
    "lookahead",
    "placement",
    "plugin",
    "ranking",
    "scored",
    "session",
    "state",
    "statement",
    "tiers",
    "together",
    "topology",
    "verdicts",
]
