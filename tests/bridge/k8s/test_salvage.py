"""bridge.k8s.salvage: a page whose one-pass decode failed, item by item; what is lost, named."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bridge.k8s import salvage, views
from scheduler.io import reads


def deep(depth: int) -> Any:
    out: Any = 1
    for _ in range(depth):
        out = {"a": out}
    return out


def raw_deep(name: str, depth: int, rv: str = "9") -> bytes:
    """An object nested ``depth`` deep (built as bytes: too deep for orjson to write)."""
    head = orjson.dumps(
        {"apiVersion": "x/v1", "metadata": {"name": name, "namespace": "kube-system", "resourceVersion": rv}}
    )
    return head[:-1] + b',"spec":' + b'{"a":' * depth + b'"}{[\\""' + b"}" * depth + b"}"


def page_of(*items: bytes, rv: str = "42", cont: str | None = None) -> bytes:
    meta = {"resourceVersion": rv, **({"continue": cont} if cont else {})}
    return b'{"kind":"ThingList","metadata":' + orjson.dumps(meta) + b',"items":[' + b",".join(items) + b"]}"


def thing(name: str, **extra: Any) -> bytes:
    return orjson.dumps({"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"}, **extra})


@pytest.mark.parametrize("depth", [1100, 20_000])
def test_a_deep_item_is_skipped_and_named_the_rest_decode(depth: int) -> None:
    body = page_of(thing("a", spec={"s": "]}"}), raw_deep("deep", depth), thing("b"), cont="next")
    with pytest.raises(views.UNDECODABLE):
        views.WHOLE.list(body)
    page, lost = salvage.page(views.WHOLE, body)
    assert [i["metadata"]["name"] for i in page["items"]] == ["a", "b"]
    assert page["items"][0]["spec"] == {"s": "]}"}  # brackets inside strings do not count
    assert page["metadata"] == {"resourceVersion": "42", "continue": "next"}
    assert [(s.key, s.rv, s.name) for s in lost] == [("kube-system/deep", "9", "kube-system/deep")]
    assert "depth" in lost[0].why or "ecursion" in lost[0].why


def test_an_item_that_does_not_fit_the_view_is_skipped_the_others_pass_through_the_view() -> None:
    good = orjson.dumps(
        {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    )
    bad = orjson.dumps(
        {"metadata": {"name": "q", "namespace": "ns", "resourceVersion": "5"}, "spec": {"containers": 7}}
    )
    body = page_of(good, bad)
    with pytest.raises(ValueError):
        reads.PODS.list(body)
    page, lost = salvage.page(reads.PODS, body)
    assert page["items"] == [{"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [{"name": "c"}]}}]
    assert [(s.key, s.rv) for s in lost] == [("ns/q", "5")]
    assert "spec.containers" in lost[0].why


def test_a_watch_event_is_named_with_its_type_and_an_unnamed_one_by_checksum() -> None:
    line = b'{"type":"MODIFIED","object":' + raw_deep("deep", 1500, rv="11") + b"}"
    lost = salvage.skipped(line, ValueError("too deep"), event=True)
    assert (lost.kind, lost.key, lost.rv) == ("MODIFIED", "kube-system/deep", "11")
    assert lost.stub() == {"metadata": {"namespace": "kube-system", "name": "deep"}}
    junk = salvage.skipped(b'{"type":"ADDED","object":{"spec":[1,2}}', ValueError("bad"), event=True)
    assert junk.kind == "ADDED" and junk.key.startswith("?") and junk.rv == ""
    again = salvage.skipped(b'{"type":"ADDED","object":{"spec":[1,2}}', ValueError("bad"), event=True)
    assert again.key == junk.key  # the same bytes, the same name: reported once
    other = salvage.skipped(b'{"type":"ADDED","object":[}', ValueError("bad"), event=True)
    assert other.key != salvage.skipped(b'{"type":"ADDED","object":{]}', ValueError("bad"), event=True).key


def test_a_body_that_is_no_list_is_still_an_error() -> None:
    with pytest.raises(ValueError):
        salvage.page(views.WHOLE, b"{not json")
    with pytest.raises(ValueError, match="not a list"):
        salvage.page(views.WHOLE, b'{"kind":"Status","details":' + b"[" * 3000 + b"]" * 3000 + b"}")
    page, lost = salvage.page(views.WHOLE, page_of(b"null", thing("a")))
    assert [i["metadata"]["name"] for i in page["items"]] == ["a"]
    assert len(lost) == 1 and lost[0].key.startswith("?")
