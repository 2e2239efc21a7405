"""Golden cases for the job plugins: a Job → the objects beside its pods and every pod's body.

Each file in ``golden/`` holds ``job`` (a manifest as a user writes it; a ``source`` line says
where it comes from) and ``expected``: ``objects`` (``plugins.objects`` with a fixed key pair) and
``pods`` (``pods.build`` for every pod, by name). Regenerate after an intended change with
``VBRIDGE_UPDATE_GOLDEN=1 pytest tests/bridge/adapters/vcjob`` and review the diff against
Volcano's behaviour: ``test_frameworks.py`` pins the values Volcano's own tests expect.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest
import yaml

from bridge.adapters.vcjob import plugins, pods, spec

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.yaml"))
KEYS = plugins.KeyPair(private_pem="-----PRIVATE-----\n", public_openssh="ssh-rsa AAAA\n")


def translate(manifest: dict[str, Any]) -> dict[str, Any]:
    body = {**manifest, "metadata": {**manifest["metadata"], "namespace": "team-a", "uid": "u-1"}}
    job = spec.defaulted(body)
    return {
        "objects": plugins.objects(job, KEYS),
        "pods": {
            f"{job['metadata']['name']}-{t}-{i}": pods.build(job, task=t, index=i) for t, i in pods.desired_names(job)
        },
    }


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_plugin_golden(path: pathlib.Path) -> None:
    case = yaml.safe_load(path.read_text())
    got = translate(case["job"])
    if os.environ.get("VBRIDGE_UPDATE_GOLDEN") == "1":
        case["expected"] = got
        path.write_text(yaml.safe_dump(case, sort_keys=False, width=120))
    assert got == case["expected"]


def test_there_is_a_case_for_each_plugin_we_carry_out() -> None:
    used: set[str] = set()
    for path in CASES:
        job = yaml.safe_load(path.read_text())["job"]
        used |= set(spec.defaulted(job)["spec"].get("plugins") or {})
    assert set(spec.APPLIED) <= used
