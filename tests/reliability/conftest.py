"""The reliability suite: real faults on a control plane of its own, and the table of results.

Every checklist item (``catalogue.ITEMS``) becomes one row of the table printed at the end of
the session: what was done, what was expected, what was observed, and pass or fail, from the
reports of the tests the row names (this suite's own, or tests elsewhere that cover the item;
``pytest -m reliability`` selects both). A test records what it observed with the ``observe``
fixture (a user property of its report). The recorder is a plugin registered here, so it sees
the reports of every test of the session, not only of this folder.

Fixtures: ``rlc``, a LocalCluster for this package (faults stop its apiserver and etcd, so it is
not the session's); ``rapi``, an admin client of it, never through the proxy; ``proxy``, a
Toxiproxy in front of its apiserver with ``proxy.kubeconfig`` for the components.
"""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client as k8s

from tests.reliability import catalogue
from tests.support import apiserver, toxiproxy
from vbridge.localcluster import binaries, cluster

Observe = Callable[[str], None]


class Recorder:
    """Outcomes of the named tests, by node id; ``pytest_terminal_summary`` prints the table."""

    def __init__(self) -> None:
        self.tests = catalogue.by_test()
        self.outcomes: dict[str, tuple[str, str]] = {}  # node id -> (outcome, observed or reason)

    @pytest.hookimpl(tryfirst=True)  # before -m deselects: the named tests carry the marker
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if item.nodeid in self.tests or _base(item.nodeid) in self.tests:
                item.add_marker(pytest.mark.reliability)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        key = report.nodeid if report.nodeid in self.tests else _base(report.nodeid)
        if key not in self.tests:
            return
        observed = "; ".join(str(v) for k, v in report.user_properties if k == "observed")
        if report.failed:
            why = report.longreprtext.strip().splitlines()[-1:] or ["failed"]
            self._set(key, "failed", f"{report.when} failed: {why[0][:300]}")
        elif report.skipped and report.when != "teardown":
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self._set(key, "skipped", str(reason))
        elif report.when == "call" and report.passed:
            self._set(key, "passed", observed)

    def _set(self, key: str, outcome: str, text: str) -> None:
        rank = {"passed": 0, "skipped": 1, "failed": 2}
        old = self.outcomes.get(key)
        # Parametrized cases share a row: the worst outcome wins, observations add up.
        if old is None or rank[outcome] > rank[old[0]]:
            self.outcomes[key] = (outcome, text)
        elif rank[outcome] == rank[old[0]] and text and text not in old[1]:
            self.outcomes[key] = (outcome, f"{old[1]}; {text}".strip("; "))

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        out = []
        for item in catalogue.ITEMS:
            seen = [(t, self.outcomes.get(t)) for t in item.tests]
            observed = []
            for test, got in seen:
                name = test.rsplit("::", 1)[-1]
                if got is None:
                    observed.append(f"{name}: not run in this session")
                elif got[1]:
                    observed.append(f"{name}: {got[0]}: {got[1]}")
                else:
                    observed.append(f"{name}: {got[0]}")
            outcomes = {got[0] if got else "not run" for _, got in seen}
            if "failed" in outcomes:
                result = "FAIL"
            elif item.missing:
                observed.append(f"not done here yet: {item.missing}")
                result = "TODO"
            elif item.not_here:
                observed.append(f"cannot be tested here: {item.not_here}")
                result = "N/A" if not item.tests else "PARTIAL"
            elif outcomes == {"passed"}:
                result = "PASS"
            elif "not run" in outcomes:
                result = "NOT RUN"
            else:
                result = "SKIPPED"
            out.append((item.id, item.done, item.expected, " | ".join(observed), result))
        return out

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.outcomes:
            return  # no named test ran: a session of other tests prints no table
        tr = terminalreporter
        tr.section("reliability and security checklist")
        tr.write_line(f"{'id':<4} {'result':<7} what was done / expected / observed")
        for rid, done, expected, observed, result in self.rows():
            tr.write_line(f"{rid:<4} {result:<7} done: {done}")
            tr.write_line(f"{'':<12} expected: {expected}")
            for line in textwrap.wrap(
                observed, 150, initial_indent=" " * 12 + "observed: ", subsequent_indent=" " * 22
            ):
                tr.write_line(line)


def _base(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("reliability-recorder"):
        config.pluginmanager.register(Recorder(), "reliability-recorder")


@pytest.fixture
def observe(request: pytest.FixtureRequest) -> Observe:
    """``observe(text)``: what the test saw, for its row in the table (also printed as it runs)."""

    def add(text: str) -> None:
        print(f"[{request.node.name}] {text}")
        request.node.user_properties.append(("observed", text))

    return add


@pytest.fixture(scope="package")
def rlc(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    with apiserver.started(cluster.LocalCluster(tmp_path_factory.mktemp("rel-cluster"), bins=bins)) as own:
        yield own


@pytest.fixture(scope="package")
def rapi(rlc: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    with apiserver.client_of(rlc) as out:
        yield out


@pytest.fixture(scope="package")
def proxy(bins: binaries.Binaries, rlc: cluster.LocalCluster) -> Iterator[toxiproxy.Proxied]:
    with toxiproxy.in_front_of(bins, rlc) as out:
        yield out


@pytest.fixture
def rns(rapi: k8s.ApiClient) -> Iterator[str]:
    name = "rel-" + uuid.uuid4().hex[:8]
    core = k8s.CoreV1Api(rapi)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        apiserver.delete_pods(rapi, name)
        core.delete_namespace(name)
