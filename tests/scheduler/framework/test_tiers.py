"""tiers: built from the registry it is handed; always-on plugins open first; answers combine."""

from __future__ import annotations

import numpy as np

from scheduler.api import building
from scheduler.framework import config, plugin, session, tiers
from tests.builders import scheduler as b
from tests.support import scenarios

OPENED: list[str] = []  # ids of the Watchers opened, in order
KNOWN = config.Known(actions=("allocate",), plugins=("ready", "not-ready", "watcher"))


def _session() -> session.Session:
    snap = building.build(nodes=[b.node("n1")], pods=[b.pod("p")], podgroups=[b.podgroup("pg")], queues=[b.queue()])
    return session.Session(snap, config.default(KNOWN), scenarios.NOW)


class Holder(plugin.Plugin):
    name = "holder"

    def on_session_open(self) -> None:
        self.session.hold({"ns/pg": np.ones(len(self.session.dims))})


class Watcher(plugin.Plugin):
    """Records what the session held when it was built and the order plugins were opened in."""

    name = "watcher"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        self.held_when_built = dict(ssn.holds.owed)

    def on_session_open(self) -> None:
        OPENED.append(self.option.arguments["id"])


class Ready(plugin.Plugin):
    name = "ready"

    def job_ready(self, job: str) -> bool:
        return True


class NotReady(plugin.Plugin):
    name = "not-ready"

    def job_ready(self, job: str) -> bool:
        return False


REGISTRY: dict[str, type[plugin.Plugin]] = {"ready": Ready, "not-ready": NotReady, "watcher": Watcher}


def _conf(*tier_names: tuple[str, ...]) -> config.SchedulerConfig:
    return config.SchedulerConfig(
        actions=("allocate",),
        tiers=tuple(
            tuple(config.PluginOption(n, {"id": f"{t}.{i}"}) for i, n in enumerate(names))
            for t, names in enumerate(tier_names)
        ),
    )


def test_always_plugins_open_before_the_tiers_plugins_are_built() -> None:
    OPENED.clear()
    ssn = _session()
    built = tiers.Tiers(_conf(("watcher",), ("watcher", "unknown")), ssn, REGISTRY, always=(Holder,))
    watchers = [p for p in built.all if isinstance(p, Watcher)]
    assert [list(w.held_when_built) for w in watchers] == [["ns/pg"], ["ns/pg"]]
    assert OPENED == ["0.0", "1.0"]  # opened once each, in tier order
    assert [type(p) for p in built.always] == [Holder]
    assert len(built.all) == 2  # "unknown" is not in the registry: skipped


def test_without_the_always_plugins_nothing_is_held() -> None:
    ssn = _session()
    tiers.Tiers(_conf(("ready",)), ssn, REGISTRY)
    assert ssn.holds.owed == {} and not ssn.holds.total.any()


def test_job_ready_needs_every_plugin_to_agree() -> None:
    assert tiers.Tiers(_conf(("ready",)), _session(), REGISTRY).job_ready("ns/pg")
    assert not tiers.Tiers(_conf(("ready",), ("not-ready",)), _session(), REGISTRY).job_ready("ns/pg")
    assert tiers.Tiers(_conf(), _session(), REGISTRY).job_ready("ns/pg")  # no opinion: ready
