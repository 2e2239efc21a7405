"""The plugins this scheduler has, listed explicitly (no import-time self-registration).

- ``PLUGINS``: conf name → class, for the tiers of ``volcano-scheduler.conf`` (Volcano's names;
  each class's ``name`` is its key, so the two cannot drift apart);
- ``ALWAYS``: plugins every session opens whatever the conf says, before the tiers' plugins
  are built: the Spark hold (ours, not Volcano's, so no conf names it or can leave it out).

``framework.tiers.Tiers`` is handed both (the framework imports no plugin), and
``scheduler.configure`` derives the plugin names a conf may use from ``PLUGINS``' keys.
"""

from __future__ import annotations

from scheduler.framework import plugin
from scheduler.plugins import capacity, conformance, drf, gang, nodeorder, overcommit, predicates, priority, proportion
from scheduler.plugins import spark as spark_plugin

__all__ = ["ALWAYS", "PLUGINS"]

PLUGINS: dict[str, type[plugin.Plugin]] = {
    cls.name: cls
    for cls in (
        gang.Gang,
        priority.Priority,
        conformance.Conformance,
        overcommit.Overcommit,
        predicates.Predicates,
        proportion.Proportion,
        drf.Drf,
        nodeorder.NodeOrder,
        nodeorder.BinPack,
        capacity.Capacity,
    )
}
ALWAYS: tuple[type[plugin.Plugin], ...] = (spark_plugin.SparkHold,)
