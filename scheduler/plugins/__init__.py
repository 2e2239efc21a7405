"""Scheduler plugins: typed objects with named hooks that return values (see ``base``).

A plugin is built per cycle from its conf arguments and reads the session; it never writes
status or changes session state. ``tiers`` combines the answers of the configured tiers the
way Volcano does and lists the available plugins explicitly.
"""

__all__ = ["base", "conformance", "gang", "nodeorder", "overcommit", "predicates", "priority", "proportion", "tiers"]
