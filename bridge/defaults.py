"""Configuration defaults, defined once: every command, server, reconciler and the scheduler read
them from here, so the chart, ``vbridge up`` and each subcommand agree.

- ``SCHEDULER_NAME``: the ``spec.schedulerName`` we stamp and the scheduler schedules (Volcano's,
  so manifests written for Volcano need no change);
- API versions of the objects we read and write;
- ``DEFAULT_QUEUES``: the queues a cluster gets when they are missing, as Volcano's scheduler
  creates them (cache.go ``newDefaultAndRootQueue``);
- tunables of the scheduler and the webhook, with their defaults;
- leader election (Lease names and client-go's default durations) and the self-managed
  webhook certificates (validity, renew-before, how often the server looks at its files).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BACKEND",
    "BACKENDS",
    "BATCH_API",
    "BODY_TIMEOUT_SECONDS",
    "BUS_API",
    "CA_RENEW_BEFORE",
    "CA_VALIDITY",
    "CERT_CHECK_SECONDS",
    "COMMAND_RETRY_MOST",
    "COMMAND_RETRY_SECONDS",
    "CONTROLLERS_LEASE",
    "CONTROLLERS_USER_AGENT",
    "DEFAULT_QUEUE",
    "DEFAULT_QUEUES",
    "FACTS_READ_CACHE",
    "FACTS_READ_KEEP_SECONDS",
    "FACTS_READ_SECONDS",
    "GANG_EVICTION_ALLOW_WHOLE_BUNDLE",
    "GANG_EVICTION_MAX_DOMAINS",
    "HEADER_TIMEOUT_SECONDS",
    "HEALTH_HOST",
    "HEALTH_PORT",
    "HEAVY_REVIEWS",
    "INTERRUPT_GRACE_SECONDS",
    "LEASE_SECONDS",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "MAX_INPUT_BYTES",
    "MAX_PENDING_CONNECTIONS",
    "NATIVE",
    "NATIVE_CREATE_RETRY_FIRST",
    "NATIVE_CREATE_RETRY_MOST",
    "NATIVE_SCHEDULER_NAME",
    "OFFLOOP_REVIEW_BYTES",
    "OVERCOMMIT_FACTOR",
    "PARK_BACKOFF_FIRST",
    "PARK_BACKOFF_MOST",
    "PODGROUP_API",
    "QUEUE_API",
    "RENEW_SECONDS",
    "RETRY_SECONDS",
    "ROOT_QUEUE",
    "SCHEDULER_LEASE_SUFFIX",
    "SCHEDULER_NAME",
    "SCHEDULER_PERIOD",
    "SCHEDULER_USER_AGENT",
    "SERVING_RENEW_BEFORE",
    "SERVING_VALIDITY",
    "SIM_BACKOFF_FIRST",
    "SIM_BACKOFF_MOST",
    "SIM_GRACE_SECONDS",
    "SIM_RESYNC_SECONDS",
    "SIM_RUNTIME_IMAGES",
    "SPARK_RESERVATION_TIMEOUT",
    "STATUS_BURST",
    "STATUS_IN_FLIGHT",
    "STATUS_QPS",
    "STOP_POLL_SECONDS",
    "STOP_TIMEOUT_SECONDS",
    "SYSTEM_NAMESPACE",
    "TLS_RELOAD_SECONDS",
    "USER_AGENT",
    "VCJOB_CREATE_IN_FLIGHT",
    "VCJOB_CREATE_RETRY_CLIENT",
    "VCJOB_CREATE_RETRY_FIRST",
    "VCJOB_CREATE_RETRY_MOST",
    "VCJOB_EXPECT_SECONDS",
    "VCJOB_JOB_BURST",
    "VCJOB_JOB_QPS",
    "VCJOB_MAX_PODS",
    "VCJOB_POD_BURST",
    "VCJOB_POD_QPS",
    "VCJOB_SYNC_WORKERS",
    "VCJOB_WAVE_LEAST",
    "VCJOB_WAVE_MOST",
    "WATCH_SILENCE_SECONDS",
    "WATCH_TIMEOUT_SECONDS",
    "WEBHOOK_TIMEOUT_SECONDS",
    "WEBHOOK_USER_AGENT",
    "default_queue_objects",
    "pod_namespace",
]

SCHEDULER_NAME = "volcano"
# Who places the pods: "volcano" (our scheduler, Volcano's semantics) or "native" (kube-scheduler's
# gang scheduling, Workload API scheduling.k8s.io/v1beta1, with our queues gating the groups);
# "auto" is native only when that API is served and the user asked for it.
BACKENDS = ("volcano", "native", "auto")
BACKEND = "volcano"
NATIVE = "native"  # the backend whose placement is kube-scheduler's
# On the native backend our scheduler decides only admission (queues); the pods keep the
# kube-scheduler's name, so that is whose pods its cycle reads.
NATIVE_SCHEDULER_NAME = "default-scheduler"

PODGROUP_API = "scheduling.volcano.sh/v1beta1"  # PodGroup
QUEUE_API = PODGROUP_API  # Queue
BATCH_API = "batch.volcano.sh/v1alpha1"  # Volcano Job
BUS_API = "bus.volcano.sh/v1alpha1"  # Command (vcctl's job suspend/resume, queue open/close)
COMMAND_RETRY_SECONDS = 1.0  # a Command whose target still has one pending waits this long, doubled
COMMAND_RETRY_MOST = 30.0

ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"
# name -> spec, as Volcano's scheduler creates them when missing.
DEFAULT_QUEUES: dict[str, dict[str, Any]] = {
    ROOT_QUEUE: {"weight": 1, "reclaimable": False},
    DEFAULT_QUEUE: {"weight": 1, "reclaimable": True},
}
SYSTEM_NAMESPACE = "kube-system"  # never sent to the webhook, never preempted; the scheduler's Lease

OVERCOMMIT_FACTOR = 1.2  # Volcano's overcommit plugin default
# gangpreempt / gangreclaim arguments (``configurations``), Volcano's defaults: whole victim jobs may
# be evicted when surplus replicas are not enough; domains scanned (one here: no HyperNodes).
GANG_EVICTION_ALLOW_WHOLE_BUNDLE = True
GANG_EVICTION_MAX_DOMAINS = 8
SPARK_RESERVATION_TIMEOUT = 300.0  # seconds a running Spark driver's executors are owed their capacity
SCHEDULER_PERIOD = 1.0  # seconds between cycles when nothing happens
# The scheduler's status writes (PodGroup and Queue status, pod conditions, Events) leave the
# cycle's path for a queue of their own (scheduler.io.status), drained at STATUS_QPS requests a
# second with bursts of STATUS_BURST: kube-scheduler's own client limits (clientConnection qps 50,
# burst 100), under which it writes its conditions and events too. Binds are not limited by it.
STATUS_QPS = 50.0
STATUS_BURST = 100
STATUS_IN_FLIGHT = 32  # status requests in flight at once
# A gang that did not fit is parked (scheduler.io.parking): not tried again until something it
# could use changes, or until its backoff ends: kube-scheduler's podInitialBackoffSeconds (1) and
# podMaxBackoffSeconds (10), doubled per attempt that failed again.
PARK_BACKOFF_FIRST = 1.0
PARK_BACKOFF_MOST = 10.0
WEBHOOK_TIMEOUT_SECONDS = 5  # admission answers in milliseconds; 5 s bounds the damage of a stall

# The Volcano Job controller (vbridge.controllers.vcjobs). Volcano bounds neither pods per job
# nor creates in flight; we refuse a job of more than VCJOB_MAX_PODS pods at admission (one
# object that makes 100,000 pods starves everyone else), and pace creation through one pool.
VCJOB_MAX_PODS = 10_000  # Σ replicas of a Job's tasks
VCJOB_CREATE_IN_FLIGHT = 64  # pod creates in flight, all jobs together (Volcano: one goroutine a pod)
VCJOB_SYNC_WORKERS = 16  # jobs synced at once (Volcano's --worker-threads)
VCJOB_CREATE_RETRY_FIRST = 1.0  # seconds before a failed create is tried again (5xx), doubled
# ... after a refusal (4xx: invalid template, missing PriorityClass, quota) or no answer (a timeout:
# the apiserver choking on the template), doubled up to VCJOB_CREATE_RETRY_MOST.
VCJOB_CREATE_RETRY_CLIENT = 5.0
VCJOB_CREATE_RETRY_MOST = 300.0  # the longest wait between attempts (kube's Job controller: 6 min)
# The native reconciler (vbridge.controllers.native): a Workload or native PodGroup the apiserver
# refused to create (a missing PriorityClass, an admission policy) is tried again, unchanged, only
# after this many seconds, doubled per refusal in a row up to NATIVE_CREATE_RETRY_MOST; a change of
# the Volcano PodGroup's spec tries at once. As the Volcano Job controller waits after a refusal.
NATIVE_CREATE_RETRY_FIRST = VCJOB_CREATE_RETRY_CLIENT
NATIVE_CREATE_RETRY_MOST = VCJOB_CREATE_RETRY_MOST
VCJOB_EXPECT_SECONDS = 60.0  # how long a created pod the watch has not shown yet counts as present
# Pod creates and deletes per second (token buckets, vbridge.controllers.vcjob_create): for the
# whole controller, and for one job. client-go's default (5/s, burst 10) makes a 10,000-pod job
# take half an hour; kube-controller-manager's is 20/s for all its controllers, Volcano's
# controller-manager 50/s (burst 100). A pod create costs the apiserver a few ms of CPU (admission,
# our webhook, etcd): 100/s is a third of a core or so, the rest is left to other callers; one
# job gets at most half of it, so a second job's pods are not queued behind 10,000 others.
VCJOB_POD_QPS = 100.0
VCJOB_POD_BURST = 100
VCJOB_JOB_QPS = 50.0
VCJOB_JOB_BURST = 50
# Waves (bridge.vcjobcontrol.waves): beyond its gang (every task's minAvailable pods, made
# together), a job holds at most as many unplaced pods as it has placed ones, at least
# VCJOB_WAVE_LEAST (a small job is made at once, as Volcano makes it) and at most
# VCJOB_WAVE_MOST (kube's ReplicaSet and Job controllers: 500 pods a sync).
VCJOB_WAVE_LEAST = 100
VCJOB_WAVE_MOST = 500

# Watches (bridge.k8s.watching): the server ends each watch after WATCH_TIMEOUT_SECONDS and it is
# resumed from its resourceVersion (cheap: served from the watch cache). A stream silent for longer
# than that plus WATCH_SILENCE_SECONDS is a dead connection (a black hole, a half-open TCP): it is
# dropped and resumed, instead of waiting for ever for a close that never comes.
WATCH_TIMEOUT_SECONDS = 60
# The User-Agent of our clients: each component's own, so an audit log tells them apart.
USER_AGENT = "vbridge"
SCHEDULER_USER_AGENT = "vbridge-scheduler"
CONTROLLERS_USER_AGENT = "vbridge-controllers"
WEBHOOK_USER_AGENT = "vbridge-webhook"
WATCH_SILENCE_SECONDS = 15.0

# The webhook server's own limits (webhooks.limits, webhooks.server).
HEADER_TIMEOUT_SECONDS = 5.0  # from accept: TLS handshake and request head, else the connection is aborted
BODY_TIMEOUT_SECONDS = 5.0  # a request body not all read by then is answered 408
MAX_HEADER_BYTES = 64 * 1024  # a request head larger than this is answered 431
MAX_CONNECTIONS = 256  # connections that sent a request; when all are, the longest idle gives way, else 503
MAX_PENDING_CONNECTIONS = 1024  # connections before their first request head; when full, the oldest is closed
OFFLOOP_REVIEW_BYTES = 64 * 1024  # reviews with a larger body run in a worker thread, not on the event loop
HEAVY_REVIEWS = 2  # worker threads for those: at most this many large reviews at once, the rest wait
# A queue admission needs that the facts' watch has not shown yet (a parent made milliseconds
# earlier) is read from the apiserver (bridge.facts), waiting at most this long; the queues read
# are kept (at most FACTS_READ_CACHE, for FACTS_READ_KEEP_SECONDS) until the watch shows them.
FACTS_READ_SECONDS = 2.0
FACTS_READ_CACHE = 1024
FACTS_READ_KEEP_SECONDS = 10.0


# A file or stdin a command reads (bridge.inputs: translate, simulate, the scheduler's --conf): at
# most this many bytes, the apiserver's own cap on one request body (etcd holds 1.5 MiB an object).
MAX_INPUT_BYTES = 3 * 1024 * 1024

# Leader election: client-go's defaults (LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s).
CONTROLLERS_LEASE = "volcano-bridge-controllers"
SCHEDULER_LEASE_SUFFIX = "-scheduler"  # the scheduler's Lease is "<schedulerName>-scheduler"
LEASE_SECONDS = 15.0
RENEW_SECONDS = 10.0
RETRY_SECONDS = 2.0
# `vbridge stop` (the chart's pre-delete hook): wait this long at most for the release's pods to go.
STOP_TIMEOUT_SECONDS = 120.0
STOP_POLL_SECONDS = 0.5
# A command asked to end (SIGINT, SIGTERM: vbridge.commands.interrupts) that has not unwound this
# long after the signal is ended outright, its child processes killed: each ends within 1 s.
INTERRUPT_GRACE_SECONDS = 0.3  # the rest of the second is for killing children and exiting on a loaded machine
HEALTH_HOST = "127.0.0.1"  # `vbridge controllers` probes (/healthz, /readyz)
HEALTH_PORT = 8081

# Self-managed webhook certificates (`vbridge controllers --manage-certs`), renewed once less
# than a third of their validity remains.
CA_VALIDITY = datetime.timedelta(days=365)
CA_RENEW_BEFORE = CA_VALIDITY / 3
SERVING_VALIDITY = datetime.timedelta(days=90)
SERVING_RENEW_BEFORE = SERVING_VALIDITY / 3
CERT_CHECK_SECONDS = 30.0  # how often the leader looks at the Secret and the caBundle
TLS_RELOAD_SECONDS = 2.0  # how often the webhook server looks for a new certificate on disk


def pod_namespace(environ: Mapping[str, str] | None = None) -> str:
    """Where this pod runs ($POD_NAMESPACE, from the downward API), else ``SYSTEM_NAMESPACE``."""
    env = os.environ if environ is None else environ
    return env.get("POD_NAMESPACE") or SYSTEM_NAMESPACE


def default_queue_objects() -> list[dict[str, Any]]:
    """``DEFAULT_QUEUES`` as Queue bodies to create."""
    return [
        {"apiVersion": QUEUE_API, "kind": "Queue", "metadata": {"name": name}, "spec": dict(spec)}
        for name, spec in DEFAULT_QUEUES.items()
    ]


# The test bed's simulated nodes (vbridge.nodesim): what they run for real and how they pace it.
SIM_RUNTIME_IMAGES = ("localhost/volcano-bridge", "volcano-bridge")  # image repositories run for real
SIM_RESYNC_SECONDS = 10.0  # how often Secret/ConfigMap/token volumes are re-materialised (kubelet: ~60 s)
SIM_BACKOFF_FIRST = 10.0  # CrashLoopBackOff: first delay, doubled per restart up to SIM_BACKOFF_MOST
SIM_BACKOFF_MOST = 300.0
SIM_GRACE_SECONDS = 30  # terminationGracePeriodSeconds when the pod does not say
