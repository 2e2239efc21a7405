"""heapgrowth: who owns an allocation's file, and growth between a mark and a report."""

from __future__ import annotations

import gc
import json
import os

from tests.support import heapgrowth

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_files_are_owned_by_the_product_the_tests_a_library_or_the_standard_library() -> None:
    assert heapgrowth.owner(os.path.join(ROOT, "scheduler", "io", "cache.py")) == "product"
    assert heapgrowth.owner(os.path.join(ROOT, "bridge", "k8s", "client.py")) == "product"
    assert heapgrowth.owner(os.path.join(ROOT, "tests", "support", "gangcheck.py")) == "tests"
    assert heapgrowth.owner("/x/.venv/lib/python3.11/site-packages/aiohttp/client.py") == "library"
    assert heapgrowth.owner(json.__file__) == "stdlib"
    assert heapgrowth.owner("<frozen importlib._bootstrap>") == "other"


def test_growth_after_the_mark_is_given_to_the_file_that_allocated_it() -> None:
    with heapgrowth.traced() as tracer:
        tracer.mark()
        held = [bytearray(1024) for _ in range(2048)]  # 2 MiB allocated here, after the mark
        growth = tracer.report()
    assert len(held) == 2048
    assert growth.by_owner["tests"] >= 2 * 2**20
    name, size = growth.top[0]
    assert name == os.path.join("tests", "support", "test_heapgrowth.py") and size >= 2 * 2**20
    assert "tests +2." in growth.text()
    assert growth.collected_by_owner["tests"] >= 2 * 2**20  # still held by ``held``, not garbage


def test_what_only_reference_cycles_hold_is_gone_after_the_full_collection() -> None:
    gc.disable()  # the collector runs in ``report`` only, not on its own between the two snapshots
    try:
        with heapgrowth.traced() as tracer:
            tracer.mark()
            cycles = []
            for _ in range(512):  # 2 MiB of garbage that only cycles hold
                node: list[object] = [bytearray(4096)]
                node.append(node)
                cycles.append(node)
            del cycles, node
            growth = tracer.report()
    finally:
        gc.enable()
    assert growth.collected_by_owner.get("tests", 0) < 2**20 <= growth.by_owner["tests"]
