"""How long and how hard the long-running tests run (the reliability suite, the scheduler's
backlog test): the CI variant by default, the long one with ``VBRIDGE_RELIABILITY_LONG=1``
(README, "Reliability suite"). Each figure can be set on its own with the environment variable
named beside it."""

from __future__ import annotations

import os

LONG = os.environ.get("VBRIDGE_RELIABILITY_LONG") == "1"


def _number(name: str, ci: float, long: float) -> float:
    return float(os.environ.get(name) or (long if LONG else ci))


KILL_LOOP = int(_number("VBRIDGE_KILL_LOOP", 20, 100))  # SIGKILLs of the scheduler mid-binds
# Generated AdmissionReviews per kind (the checklist's 100,000 in the long run; 100 from each
# hypothesis example, tests.support.reviewgen), and hypothesis examples of raw bodies.
FUZZ_REVIEWS = int(_number("VBRIDGE_FUZZ_REVIEWS", 3_000, 100_000))
FUZZ_EXAMPLES = int(_number("VBRIDGE_FUZZ_EXAMPLES", 500, 10_000))
APISERVER_DOWN_SECONDS = _number("VBRIDGE_APISERVER_DOWN_SECONDS", 60, 60)
CHURN_SECONDS = _number("VBRIDGE_CHURN_SECONDS", 60, 600)  # how long work arrives in the churn run
CHURN_RATE = _number("VBRIDGE_CHURN_RATE", 1.0, 2.0)  # PodGroups submitted per second in it
# Trace Python allocations in the churn run and say who the memory of its last half went to
# (tests.support.heapgrowth); off by default, as tracing slows every allocation.
TRACE_HEAP = os.environ.get("VBRIDGE_CHURN_TRACE_HEAP") == "1"
# The backlog scenario (tests/reliability/test_backlog.py): replicas of the job that cannot fit,
# and the other tenant's 2-pod jobs created one after another while it waits, each to be bound
# within 5 s; also the size of the unplaceable gang of tests/integration/scheduler/test_backlog.py.
BACKLOG_PODS = int(_number("VBRIDGE_BACKLOG_PODS", 2_000, 10_000))
BACKLOG_CANARIES = int(_number("VBRIDGE_BACKLOG_CANARIES", 10, 10))
