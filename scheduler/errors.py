"""Errors the scheduler core raises on purpose.

    bridge.errors.BridgeError
    ├── SchedulerError            the core was given something it cannot use
    │   └── QuantityError             a Kubernetes quantity string does not parse
    └── bridge.errors.ConfigError
        └── SchedulerConfigError      volcano-scheduler.conf or an option is invalid

The core never raises for scheduling outcomes: an unschedulable pod is a verdict in the plan,
not an exception.
"""

from __future__ import annotations

from bridge import errors

__all__ = ["QuantityError", "SchedulerConfigError", "SchedulerError"]


class SchedulerError(errors.BridgeError):
    """The scheduler core was given input it cannot use."""


class QuantityError(SchedulerError, ValueError):
    """A Kubernetes quantity ("500m", "1Gi", "1e3", ...) does not parse."""


class SchedulerConfigError(errors.ConfigError):
    """The scheduler configuration (YAML or an option) is invalid."""
