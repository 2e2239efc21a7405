"""Scheduler plugins: typed objects with named hooks that return values (see ``framework.plugin``).

A plugin is built per cycle from its conf arguments and reads the session; it never writes
status or changes session state. ``registry`` lists the available plugins explicitly; the
framework's ``tiers`` combines their answers the way Volcano does. ``spark`` is the Spark hold.
"""

__all__ = ["conformance", "gang", "nodeorder", "overcommit", "predicates", "priority", "proportion", "spark"]
