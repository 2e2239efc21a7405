"""Hostile and malformed input: generated AdmissionReviews of every kind through the webhook's
HTTP handler in-process, raw bytes, deep nesting, huge arrays and strings; bodies over the cap,
forged Content-Length and slow-loris clients against the real server in a child process.

Every request gets a valid AdmissionReview answer (HTTP 200, the request's uid, ``allowed`` set,
a JSON Patch that decodes, a message on a denial), or, for what is not a review at all, a clean
HTTP error; nothing raises; memory stays bounded (the peak is printed). The number of generated
reviews per kind is ``budget.FUZZ_REVIEWS`` (``tests.support.reviewgen``: 100 reviews from each
hypothesis example; 100,000 per kind with VBRIDGE_RELIABILITY_LONG=1), of raw bodies
``budget.FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import json
import resource
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any

import hypothesis
import jsonpatch
import pytest
from hypothesis import strategies as st

from bridge.adapters import base, registry
from tests.builders import kubeflow as kf
from tests.reliability import conftest
from tests.support import admission as support
from tests.support import asgi, budget, reviewgen, reviewseeds, serverproc
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster
from webhooks import server

pytestmark = pytest.mark.reliability
PATHS = [a.registration.path for a in registry.ADAPTERS]
SEEDS = reviewseeds.SEEDS
ABSURD = st.sampled_from(
    ["1e400", "-1", "1e30000000", "9" * 5000, "0.000000001m", "NaN", "1Ei", "-0", "", " ", "1..2", "１", "\x00"]
)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | ABSURD
)
VALUES = st.recursive(
    LEAVES,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)


def check(status: int, raw: bytes, uid: str | None) -> dict[str, Any]:
    """The answer is a valid AdmissionReview (with ``uid`` when the request had one)."""
    assert status == 200, (status, raw[:300])
    out = json.loads(raw)
    assert out["kind"] == "AdmissionReview", out
    # The request's apiVersion is echoed: a garbled body (no uid to check) may have garbled it.
    assert out["apiVersion"] == "admission.k8s.io/v1" or uid is None, out
    response = out["response"]
    assert isinstance(response["allowed"], bool) and isinstance(response["uid"], str)
    if uid is not None:
        assert response["uid"] == uid
    if "patch" in response or "patchType" in response:
        assert response["patchType"] == "JSONPatch"
        assert isinstance(json.loads(base64.b64decode(response["patch"])), list)
    if not response["allowed"]:
        assert response["status"]["message"] and len(response["status"]["message"]) <= 2048
    return dict(response)


@pytest.fixture(scope="module")
def caller() -> Iterator[asgi.Caller]:
    out = asgi.Caller(server.App(support.Facts(), server.Settings()))
    try:
        yield out
    finally:
        out.close()


class NativeFacts(support.Facts):
    """The same facts, on the native backend (kube-scheduler places the pods: other stamps)."""

    def context(self, namespace: str, *, scheduler_name: str) -> base.Context:
        return dataclasses.replace(super().context(namespace, scheduler_name=scheduler_name), backend="native")


@pytest.fixture(scope="module")
def native_caller() -> Iterator[asgi.Caller]:
    out = asgi.Caller(server.App(NativeFacts(), server.Settings()))
    try:
        yield out
    finally:
        out.close()


def _kib_peak() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


Row = tuple[int, int, int, int, float, int]  # reviews, denied, allowed, patched, reviews/s, peak RSS KiB


@pytest.fixture(scope="module")
def fuzz_table(request: pytest.FixtureRequest) -> Iterator[dict[str, Row]]:
    """The generated-review figures by kind, printed as one table once the kinds have run."""
    rows: dict[str, Row] = {}
    yield rows
    if rows:
        lines = [
            f"{'kind':<38} {'reviews':>8} {'denied':>8} {'allowed':>8} {'patched':>8} {'per s':>6} {'peak RSS':>9}"
        ]
        lines += [
            f"{kind:<38} {n:>8} {denied:>8} {allowed:>8} {patched:>8} {rate:>6.0f} {rss >> 10:>5} MiB"
            for kind, (n, denied, allowed, patched, rate, rss) in rows.items()
        ]
        capture = request.config.pluginmanager.getplugin("capturemanager")  # past the capture, as capsys.disabled
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            print("\n\ngenerated AdmissionReviews (test_s6_generated_reviews_of_every_kind_get_a_valid_answer):")
            print("\n".join(lines))


@pytest.mark.timeout(max(300, budget.FUZZ_REVIEWS // 50))
@pytest.mark.parametrize("path", PATHS)
def test_s6_generated_reviews_of_every_kind_get_a_valid_answer(
    path: str, caller: asgi.Caller, native_caller: asgi.Caller, observe: conftest.Observe, fuzz_table: dict[str, Row]
) -> None:
    """``budget.FUZZ_REVIEWS`` hostile reviews of the kind (``reviewgen``), each a valid answer;
    none says "internal error" (an exception the handler did not expect). Every other batch is
    answered on the native backend."""
    kind, seed = SEEDS[path]
    seeds = [seed, *reviewseeds.RICH[path]]
    counts = {"denied": 0, "allowed": 0, "patched": 0}

    @hypothesis.settings(
        max_examples=-(-budget.FUZZ_REVIEWS // reviewgen.PER_SEED),
        deadline=None,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(number=st.integers(0, 2**64 - 1))
    def run(number: int) -> None:
        batch = reviewgen.batch(number, seeds, kind)
        answers = (native_caller if number % 2 else caller).post_all(path, [r.body for r in batch])
        for review, answer in zip(batch, answers, strict=True):
            response = check(*answer, review.uid)
            said = " ".join([response.get("status", {}).get("message", ""), *response.get("warnings", ())])
            assert "internal error" not in said, (number, review.operation, said, review.body[:3000])
            counts["denied" if not response["allowed"] else "patched" if "patch" in response else "allowed"] += 1

    t0 = time.monotonic()
    run()
    seconds = time.monotonic() - t0
    total = sum(counts.values())
    assert total >= budget.FUZZ_REVIEWS, counts
    name = path.removeprefix("/mutate/")
    fuzz_table[name] = (total, counts["denied"], counts["allowed"], counts["patched"], total / seconds, _kib_peak())
    observe(
        f"{name}: {total} reviews in {seconds:.0f} s ({total / seconds:.0f}/s; {counts}), none an internal error; "
        f"peak RSS of the test process {_kib_peak() / 1024:.0f} MiB"
    )


@pytest.mark.timeout(300)
def test_s6_raw_bytes_and_deep_nesting_get_a_valid_answer(caller: asgi.Caller, observe: conftest.Observe) -> None:
    path = "/mutate/kubeflow-org-tfjob"
    seen = 0

    @hypothesis.settings(max_examples=budget.FUZZ_EXAMPLES, deadline=None, database=None)
    @hypothesis.given(raw=st.binary(max_size=300) | VALUES.map(lambda v: json.dumps(v).encode()))
    def run(raw: bytes) -> None:
        nonlocal seen
        check(*caller.post(path, raw), None)
        seen += 1

    run()
    job = json.loads(support.review(kf.tfjob("deep", Worker=kf.replica(1)), kind=support.TF, uid="deep-nesting"))
    depth = 20_000  # past every JSON parser's default limit, the request's uid before it
    job["request"]["object"]["spec"]["deep"] = "@"
    deep = json.dumps(job).replace('"@"', '{"a":[' * depth + "{}" + "]}" * depth).encode()
    big_array = kf.tfjob("arr", Worker=kf.replica(1))
    big_array["metadata"]["labels"] = {f"k{i}": "v" for i in range(60_000)}
    big_array["spec"]["huge"] = list(range(250_000))
    big_string = kf.tfjob("str", Worker=kf.replica(1))
    big_string["metadata"]["annotations"] = {"x": "y" * (2 * 1024 * 1024)}
    sizes = []
    bodies = [("deep nesting", deep)]
    bodies += [
        (n, support.review(o, kind=support.TF, uid=n.replace(" ", "-")))
        for n, o in (("huge arrays", big_array), ("a 2 MiB string", big_string))
    ]
    for name, raw in bodies:
        sizes.append(f"{name} ({len(raw) // 1024} KiB)")
        check(*caller.post(path, raw), name.replace(" ", "-"))  # a uid as the apiserver writes one
    observe(
        f"{seen} raw and JSON bodies, then {', '.join(sizes)}: each a valid answer with its uid; "
        f"peak RSS of the test process {_kib_peak() / 1024:.0f} MiB"
    )


def _tls(port: int) -> ssl.SSLSocket:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))


def _status(tls: ssl.SSLSocket) -> int:
    head = b""
    try:
        while b"\r\n" not in head:
            chunk = tls.recv(4096)
            if not chunk:
                return 0
            head += chunk
    except (OSError, ssl.SSLError):
        return 0
    return int(head.split(b" ", 2)[1])


@pytest.mark.timeout(120)
def test_r6_s5_hostile_bodies_over_tls_get_answers_and_bounded_memory(
    tmp_path_factory: pytest.TempPathFactory, observe: conftest.Observe
) -> None:
    folder = tmp_path_factory.mktemp("fuzz-tls")
    pki = cluster_certs.make_pki(folder)
    serving = cluster_certs.issue_from(pki.ca, folder, "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",))
    port = cluster.free_port()
    review = support.review(kf.tfjob("t", Worker=kf.replica(1)), kind=support.TF)
    head = "POST /mutate/kubeflow-org-tfjob HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    with serverproc.ServerProcess(serving, port, header_timeout=2.0, max_connections=64) as proc:
        base = proc.rss()
        peak = base
        results = {}
        with _tls(port) as tls:  # 8 MiB declared and sent: refused once 3 MiB are read
            tls.sendall(f"{head}Content-Length: {8 << 20}\r\n\r\n".encode())
            try:
                for _ in range(8 * 16):
                    tls.sendall(b" " * 65536)
            except (OSError, ssl.SSLError):
                pass  # the server stopped reading and closed: the refusal is already on its way
            results["8 MiB body"] = _status(tls)
            peak = max(peak, proc.rss())
        with _tls(port) as tls:  # forged: Content-Length longer than what is sent
            tls.sendall(f"{head}Content-Length: 100000\r\n\r\n".encode() + review)
            results["Content-Length > body"] = _status(tls)
        with _tls(port) as tls:  # forged: Content-Length shorter than what is sent
            tls.sendall(f"{head}Content-Length: 20\r\n\r\n".encode() + review)
            results["Content-Length < body"] = _status(tls)
        with _tls(port) as tls:  # a honest request still answered 200 beside them
            tls.sendall(f"{head}Content-Length: {len(review)}\r\n\r\n".encode() + review)
            results["honest"] = _status(tls)
        loris = [_tls(port) for _ in range(40)]  # slow-loris: a header byte at a time
        t0 = time.monotonic()
        closed = 0
        for sock in loris:
            sock.sendall(head[:10].encode())
        while closed < len(loris) and time.monotonic() - t0 < 15:
            closed = 0
            for sock in loris:
                try:
                    sock.sendall(b"X")
                except (OSError, ssl.SSLError):
                    closed += 1
            peak = max(peak, proc.rss())
            time.sleep(0.5)  # the trickle's pace, not a wait for state
        for sock in loris:
            sock.close()
        loris_seconds = time.monotonic() - t0
    assert results["8 MiB body"] == 413, results
    assert results["Content-Length > body"] in (400, 408), results
    assert results["Content-Length < body"] in (200, 400), results
    assert results["honest"] == 200, results
    assert closed == len(loris), f"{len(loris) - closed} slow-loris connections still open after {loris_seconds:.0f} s"
    assert peak - base < 64 << 20, f"the server grew by {(peak - base) >> 20} MiB"
    observe(
        f"answers {results}; 40 slow-loris connections all closed within {loris_seconds:.1f} s (header timeout 2 s); "
        f"server RSS {base >> 20} MiB at start, peak {peak >> 20} MiB"
    )


def test_s9_objects_with_a_deletion_timestamp_are_not_skipped(caller: asgi.Caller, observe: conftest.Observe) -> None:
    seen = []
    for path in ("/mutate/kubeflow-org-tfjob", "/mutate/batch-volcano-sh-job", "/mutate/spark-apache-org-pod"):
        kind, seed = SEEDS[path]
        plain = check(*caller.post(path, support.review(seed, kind=kind)), "u-1")
        dying = copy.deepcopy(seed)
        dying["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        marked = check(*caller.post(path, support.review(dying, kind=kind)), "u-1")
        assert marked == plain and "patch" in marked, (path, marked)
        seen.append(path.removeprefix("/mutate/"))
    observe(f"{', '.join(seen)}: the same patch with and without a deletionTimestamp")


def test_r1_r8_reviews_are_idempotent_and_reinvocation_safe(caller: asgi.Caller, observe: conftest.Observe) -> None:
    seen = []
    for path, (kind, seed) in SEEDS.items():
        first = check(*caller.post(path, support.review(seed, kind=kind)), "u-1")
        if "patch" not in first:
            continue
        patched = jsonpatch.apply_patch(seed, json.loads(base64.b64decode(first["patch"])))
        again = check(*caller.post(path, support.review(patched, kind=kind)), "u-1")
        assert "patch" not in again or json.loads(base64.b64decode(again["patch"])) == [], (path, again)
        # Another webhook adds a sidecar to every pod template (or the pod), then we are called again.
        sidecar = {"name": "sidecar", "image": "envoy"}
        grown = copy.deepcopy(patched)
        templates = [p for p, _ in reviewgen.members(grown) if p and p[-1] == "containers"]
        for where in templates:
            node = grown
            for key in where:
                node = node[key]
            node.append(dict(sidecar))
        third = check(*caller.post(path, support.review(grown, kind=kind)), "u-1")
        result = (
            jsonpatch.apply_patch(grown, json.loads(base64.b64decode(third["patch"]))) if "patch" in third else grown
        )
        assert result == grown, (path, third)
        seen.append(path.removeprefix("/mutate/"))
    assert len(seen) >= 6, seen
    observe(f"{len(seen)} kinds: second review an empty patch; after a sidecar was added, still nothing to change")
