"""Volcano's kinds as users write them directly: PodGroups, Queues and bus Commands. Pure.

Neither is translated; both are judged. ``podgroup``: a PodGroup made by hand (or by an
operator) must be sound (``bridge.validation.podgroup_spec``) and may name only a queue that
admits its namespace (``bridge.queues.refusal``): on CREATE, and on UPDATE when the queue
changed. ``queue``: a Queue must be sound (``bridge.models.queue.check``), its parent neither
itself nor missing. Both are registered ``Ignore``: the scheduler refuses what slipped past
(an unsound group or one in a queue its namespace may not use gets a condition, never a bind),
so a bridge outage never stops operators, reconcilers or administrators from writing them.
``command``: a Command gets its author recorded on CREATE and keeps author, action and target on
UPDATE (``bridge.bus``); also ``Ignore``: the controller refuses a Command with no author.
"""

__all__ = ["command", "podgroup", "queue"]
