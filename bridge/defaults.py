"""Configuration defaults, defined once: every command, server, reconciler and the scheduler read
them from here, so the chart, ``vbridge up`` and each subcommand agree.

- ``SCHEDULER_NAME``: the ``spec.schedulerName`` we stamp and the scheduler schedules (Volcano's,
  so manifests written for Volcano need no change);
- API versions of the objects we read and write;
- ``DEFAULT_QUEUES``: the queues a cluster gets when they are missing, as Volcano's scheduler
  creates them (cache.go ``newDefaultAndRootQueue``);
- tunables of the scheduler and the webhook, with their defaults.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BATCH_API",
    "DEFAULT_QUEUE",
    "DEFAULT_QUEUES",
    "OVERCOMMIT_FACTOR",
    "PODGROUP_API",
    "QUEUE_API",
    "ROOT_QUEUE",
    "SCHEDULER_NAME",
    "SCHEDULER_PERIOD",
    "SPARK_RESERVATION_TIMEOUT",
    "SYSTEM_NAMESPACE",
    "WEBHOOK_TIMEOUT_SECONDS",
    "default_queue_objects",
]

SCHEDULER_NAME = "volcano"

PODGROUP_API = "scheduling.volcano.sh/v1beta1"  # PodGroup
QUEUE_API = PODGROUP_API  # Queue
BATCH_API = "batch.volcano.sh/v1alpha1"  # Volcano Job

ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"
# name -> spec, as Volcano's scheduler creates them when missing.
DEFAULT_QUEUES: dict[str, dict[str, Any]] = {
    ROOT_QUEUE: {"weight": 1, "reclaimable": False},
    DEFAULT_QUEUE: {"weight": 1, "reclaimable": True},
}
SYSTEM_NAMESPACE = "kube-system"  # never sent to the webhook, never preempted; the scheduler's Lease

OVERCOMMIT_FACTOR = 1.2  # Volcano's overcommit plugin default
SPARK_RESERVATION_TIMEOUT = 300.0  # seconds a running Spark driver's executors are owed their capacity
SCHEDULER_PERIOD = 1.0  # seconds between cycles when nothing happens
WEBHOOK_TIMEOUT_SECONDS = 5  # admission answers in milliseconds; 5 s bounds the damage of a stall


def default_queue_objects() -> list[dict[str, Any]]:
    """``DEFAULT_QUEUES`` as Queue bodies to create."""
    return [
        {"apiVersion": QUEUE_API, "kind": "Queue", "metadata": {"name": name}, "spec": dict(spec)}
        for name, spec in DEFAULT_QUEUES.items()
    ]
