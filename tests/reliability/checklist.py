"""What a row of the checklist table is (``Item``), and the test paths rows name often."""

from __future__ import annotations

import dataclasses

__all__ = ["ADM", "BUS", "CONF", "HELM", "LIM", "SCHED", "SRV", "VAL", "Item", "R"]

R = "tests/reliability/"
ADM = "tests/webhooks/test_admission.py::"
SRV = "tests/webhooks/test_server.py::"
LIM = "tests/webhooks/test_limits.py::"
CONF = "tests/webhooks/test_configuration.py::"
VAL = "tests/charts/test_values.py::"
HELM = "tests/integration/test_helm_install.py::"
SCHED = "tests/integration/scheduler/"
BUS = "tests/integration/test_bus_authority.py::"


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    done: str  # what the tests do
    expected: str
    tests: tuple[str, ...] = ()  # pytest node ids, from the repository root
    not_here: str = ""  # why it cannot be tested on this machine (then ``tests`` may be empty)
    missing: str = ""  # what this suite does not do yet for the item (its row says so: TODO)
