"""``root`` takes no jobs of any kind and is never offered as a usable queue (Volcano's
jobs-validate: "can not submit job to root queue")."""

from __future__ import annotations

import pytest

from bridge import errors, queues
from bridge.adapters import base
from bridge.adapters.vcjob import adapter as vcjob_adapter
from tests.builders import vcjob as jobs

QUEUES = {"root": queues.QueueFacts(), "default": queues.QueueFacts(), "gpu": queues.QueueFacts()}


def test_root_is_refused_for_every_kind_with_volcanos_words() -> None:
    with pytest.raises(errors.QueueError) as exc:
        queues.check("root", namespace="team-a", queues=QUEUES)
    assert "can not submit job to root queue" in str(exc.value)
    assert str(exc.value).endswith("queues open to namespace 'team-a': default, gpu")
    ctx = base.Context(namespace="team-a", queues=QUEUES)
    with pytest.raises(errors.QueueError, match="can not submit job to root queue"):
        ctx.queue(field=None, annotations={"scheduling.volcano.sh/queue-name": "root"})  # any kind's path


def test_a_volcano_job_to_root_is_denied_and_denials_never_suggest_root() -> None:
    job = jobs.tf()
    job["spec"]["queue"] = "root"
    ctx = base.Context(namespace="team-a", queues=QUEUES)
    with pytest.raises(errors.QueueError, match="can not submit job to root queue"):
        vcjob_adapter.VolcanoJobAdapter().admit(job, ctx)
    job["spec"]["queue"] = "missing"
    with pytest.raises(errors.QueueError) as exc:
        vcjob_adapter.VolcanoJobAdapter().admit(job, ctx)
    assert "root" not in str(exc.value).split("queues open to")[1]
    only_root = base.Context(namespace="team-a", queues={"root": queues.QueueFacts()})
    with pytest.raises(errors.QueueError, match="queues open to namespace 'team-a': none"):
        only_root.queue(field="missing", annotations=None)
