"""Scheduler plugins: typed objects with named hooks that return values (see ``framework.plugin``).

Volcano's plugins, by conf name: ``gang`` (all or nothing), ``priority``, ``drf`` (dominant
resource fairness), ``proportion`` (queue shares by weight), ``capacity`` (elastic queue quotas,
its queue tree's figures in ``levels``), ``overcommit``, ``conformance`` (never evict system
pods), ``predicates`` and ``nodeorder``.

A plugin is built per cycle from its conf arguments and reads the session; it never writes
status or changes session state (but for ``on_session_open`` set-up). ``registry`` lists the
available plugins explicitly, by conf name, plus those every session has (``ALWAYS``); the
framework's ``tiers`` is handed it and combines their answers the way Volcano does. ``spark``
is the Spark hold, a plugin every session opens; it holds for ``stages`` too (the room of a
staged group's later stages, once its first runs). ``interpod`` (pod affinity and anti-affinity)
and ``spread`` (topology spread constraints) are not plugins: ``predicates`` and ``nodeorder``
ask them, as Volcano's plugins embed kube-scheduler's.
"""

__all__ = [
    "capacity",
    "conformance",
    "drf",
    "gang",
    "interpod",
    "levels",
    "nodeorder",
    "overcommit",
    "predicates",
    "priority",
    "proportion",
    "registry",
    "spark",
    "spread",
    "stages",
]
