"""What ``bench/scheduler_compare.py`` prints at the end: the table, the ratios against the targets, the profiles."""

from __future__ import annotations

import collections
import pathlib

from compare import contenders

# Profile buckets: the first whose marker appears in a sample's stack (function name or file) owns it.
PROFILE_BUCKETS = (
    # Modules executing their bodies; a failed import (see _summarize_profile) never gets there.
    ("start-up imports", "_call_with_frames_removed"),
    (
        "core: snapshot + actions (worker thread)",
        "scheduler/api/building.py",
        "scheduler/cycle.py",
        "Scheduler._decide",
    ),
    ("binder: pods/binding POSTs", "scheduler/io/binder.py"),
    ("status writer: PodGroup status, events", "scheduler/io/status.py"),
    ("watches + cache", "scheduler/io/cache.py", "bridge/k8s/watching.py"),
    ("cache.inputs / loop", "scheduler/io/loop.py"),
)
HTTP_STACK = ("aiohttp/", "yarl/", "multidict/", "ssl.py")


def summarize_profile(path: pathlib.Path, top: int = 12) -> None:
    """Where our scheduler's CPU went, from py-spy's raw (collapsed-stack) output: by part of the
    scheduler, how much of it is the HTTP client stack, and the heaviest functions of ours and
    of the client."""
    if not path.exists():
        print(f"profile {path.name}: no output", flush=True)
        return
    buckets: collections.Counter[str] = collections.Counter()
    in_http: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        bucket = next((b[0] for b in PROFILE_BUCKETS if any(m in stack for m in b[1:])), "other (event loop, idle)")
        buckets[bucket] += n
        if any(m in stack for m in HTTP_STACK):
            in_http[bucket] += n
        # A frame reads "function (path/to/file.py:line)"; paths are relative to sys.path.
        for frame in {f.rpartition(":")[0] for f in stack.split(";")}:
            if frame.partition(" (")[2].startswith(("scheduler/", "bridge/k8s", "aiohttp/")):
                incl[frame + ")"] += n
    if not total:
        return
    print(f"\nprofile {path.name}: {total} samples at 200 Hz = {total / 200:.1f} s of CPU")
    for bucket, n in buckets.most_common():
        print(f"  {100 * n / total:5.1f}%  {bucket}  ({100 * in_http[bucket] / total:.1f}% in aiohttp/ssl)")
    print("  heaviest functions (inclusive):")
    for frame, n in incl.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {frame}")


def report(results: list[contenders.Result], targets: bool, ceiling_target: float = 0.8) -> None:
    """The table of every contender's median run; with ``targets``, ours against each other in the
    same run (issue 4's ≥ 3× Volcano, ≥ 1.5× kube-scheduler, and ``ceiling_target`` of the ceiling:
    0.8 at 1,000 nodes, issue 17's 0.9 at 5,000)."""
    print()
    cols = ("pods", 6), ("bound", 6), ("create s", 9), ("first s", 8), ("sched s", 8), ("pods/s", 8)
    print(f"{'workload':<9} {'contender':<9} " + " ".join(f"{c:>{w}}" for c, w in cols))
    for r in results:
        line = (
            f"{r.workload:<9} {r.contender:<9} {r.pods:>6} {r.bound:>6} {r.create_seconds:>9.1f} "
            f"{r.first_bind:>8.1f} {r.seconds:>8.1f} {r.rate:>8.0f}"
        )
        print(line + (f"  ERROR {r.error}" if r.error else ""))
    if not targets:
        return
    by = {(r.workload, r.contender): r for r in results}
    print()
    for work in dict.fromkeys(r.workload for r in results):
        ours = by.get((work, "ours"))
        if ours is None or not ours.rate:
            continue
        for other, target, fmt in (
            ("volcano", 3.0, "{:.2f}×"),
            ("kube", 1.5, "{:.2f}×"),
            ("ceiling", ceiling_target, "{:.0%}"),
        ):
            them = by.get((work, other))
            if them is None or not them.rate:
                print(f"{work:<9} ours/{other:<8} n/a ({them.error if them else 'not run'})")
                continue
            ratio = ours.rate / them.rate
            verdict = "met" if ratio >= target else "MISSED"
            print(f"{work:<9} ours/{other:<8} {fmt.format(ratio):>7}  target ≥ {fmt.format(target)}  {verdict}")
