"""Errors the scheduler core raises on purpose.

    bridge.errors.BridgeError
    ├── SchedulerError            the core was given something it cannot use
    ├── InvalidObjectError ── QuantityError   (bridge.errors; raised by bridge.quantity)
    └── bridge.errors.ConfigError
        └── SchedulerConfigError      volcano-scheduler.conf or an option is invalid

The core never raises for scheduling outcomes: an unschedulable pod is a verdict in the plan,
not an exception.
"""

from __future__ import annotations

from bridge import errors

__all__ = ["SchedulerConfigError", "SchedulerError"]


class SchedulerError(errors.BridgeError):
    """The scheduler core was given input it cannot use."""


class SchedulerConfigError(errors.ConfigError):
    """The scheduler configuration (YAML or an option) is invalid."""
