"""``bridge.inputs``: bounded reads of a user's files and YAML whose aliases stay within kubectl's bound."""

from __future__ import annotations

import io
import os
import pathlib
import threading
import time
from collections.abc import Callable

import pytest

from bridge import errors, inputs

# Nine levels of nine aliases each: 9**9 (387 million) strings from 342 bytes ("billion laughs").
BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_a_billion_laughs_is_refused_before_anything_is_built() -> None:
    started = time.monotonic()
    with pytest.raises(errors.InputError, match=r"document contains excessive aliasing \(\d+ nodes once expanded"):
        list(inputs.yaml_documents("bomb.yaml", BOMB))
    assert time.monotonic() - started < 1


def test_merge_keys_and_shared_blocks_read_as_kubectl_reads_them_and_unshared() -> None:
    text = "base: &base {cpu: '1', memory: 1Gi}\nworker: {<<: *base, cpu: '2'}\nps: *base\nmore: *base\n"
    ((line, column, doc),) = inputs.yaml_documents("m.yaml", text)
    assert (line, column) == (1, 1)
    assert doc["worker"] == {"cpu": "2", "memory": "1Gi"}
    assert doc["ps"] == doc["base"] == doc["more"]
    doc["ps"]["cpu"] = "8"  # a copy per alias, as go-yaml decodes: changing one place changes no other
    assert doc["base"]["cpu"] == doc["more"]["cpu"] == "1"


def test_aliasing_under_the_ratio_passes_and_over_it_is_refused() -> None:
    block = "&b [" + ", ".join(["x"] * 9) + "]"  # 10 nodes
    many = "{one: " + block + ", " + ", ".join(f"k{i}: *b" for i in range(150)) + "}"
    ((_, _, doc),) = inputs.yaml_documents("ok.yaml", many)  # 1,500 of 1,662 nodes aliased: 90 % < 99 %
    assert len(doc) == 151 and doc["k149"] == ["x"] * 9
    wide = "[&b [" + ", ".join(["x"] * 99) + "], " + ", ".join(["*b"] * 200) + "]"  # 20,000 of 20,101: 99.5 %
    with pytest.raises(errors.InputError, match=r"^wide\.yaml:1:1: document contains excessive aliasing"):
        list(inputs.yaml_documents("wide.yaml", wide))


def test_an_alias_inside_its_own_anchor_is_refused_with_its_place() -> None:
    with pytest.raises(errors.InputError) as refused:
        list(inputs.yaml_documents("r.yaml", "a: 1\nb: &r [x, *r]\n"))
    assert str(refused.value) == "r.yaml:2:4: an alias to a node that contains it"


def test_documents_before_a_bad_one_are_kept_and_the_error_has_its_position() -> None:
    documents = inputs.yaml_documents("m.yaml", "a: 1\n---\nb: [2\n")
    assert next(documents) == (1, 1, {"a": 1})
    with pytest.raises(errors.InputError, match=r"^m\.yaml:4:1: while parsing a flow sequence"):
        next(documents)


def test_one_document_is_asked_for_and_two_are_an_error() -> None:
    assert inputs.yaml_document("c", "") is None
    assert inputs.yaml_document("c", "a: [1]\n") == {"a": [1]}
    with pytest.raises(errors.InputError, match=r"^c:3:1: expected a single document"):
        inputs.yaml_document("c", "a: 1\n---\nb: 2\n")


def test_a_file_up_to_the_limit_is_read_and_one_byte_more_is_refused_by_its_size(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(b"x" * 100)
    assert inputs.read(str(path), limit=100) == b"x" * 100
    with pytest.raises(errors.InputError, match=r"f\.yaml: too large: 100 bytes, over the"):
        inputs.read(str(path), limit=99)


def test_stdin_is_read_only_up_to_the_limit() -> None:
    assert inputs.read("-", limit=10, stdin=io.BytesIO(b"0123456789")) == b"0123456789"
    endless = io.BytesIO(b"\0" * 1000)
    with pytest.raises(errors.InputError, match=r"^<stdin>: too large: over the"):
        inputs.read("-", limit=10, stdin=endless)
    assert endless.tell() == 11  # one byte past the limit was read, no more


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: os.mkfifo(p), "a FIFO"),  # no writer: a blocking open would hang here
        (lambda p: p.symlink_to("/dev/zero"), "a character device"),
        (lambda p: p.mkdir(), "a directory"),
    ],
    ids=["fifo", "dev-zero", "directory"],
)
def test_anything_but_a_regular_file_is_refused_at_once(
    tmp_path: pathlib.Path, make: Callable[[pathlib.Path], object], kind: str
) -> None:
    path = tmp_path / "input"
    make(path)
    started = time.monotonic()
    with pytest.raises(errors.InputError, match=f"^{path}: not a regular file \\({kind}\\)"):
        inputs.read(str(path))
    assert time.monotonic() - started < 1


def test_a_missing_file_says_so() -> None:
    with pytest.raises(errors.InputError, match=r"^/nonexistent/x\.yaml: cannot read: No such file or directory$"):
        inputs.read("/nonexistent/x.yaml")


def test_a_kubeconfig_may_be_a_stream_read_within_the_same_bound(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "kubeconfig"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(b"apiVersion: v1\n",))  # as --kubeconfig <(cat …)
    writer.start()
    try:
        assert inputs.read(str(fifo), streams=True) == b"apiVersion: v1\n"
    finally:
        writer.join(5)
    with pytest.raises(errors.InputError, match=r"^/dev/zero: too large: over the"):
        inputs.read("/dev/zero", streams=True)
