"""Many hostile AdmissionReviews from one seed, fast: the fuzz tests' generator.

A hypothesis example is slow (milliseconds); 100,000 reviews per kind need a cheaper source. Each
example draws one integer, and ``batch(number, seeds, kind)`` derives ``PER_SEED`` reviews from
it with ``random.Random(number)``: a valid object of the kind (``reviewseeds``) with one to
four mutations, each at a member picked by a random walk (replaced by a value of another type, a
huge number, a huge or odd string, deep nesting, or an absurd quantity; deleted; unknown members
added), as a CREATE, an UPDATE (its oldObject
mutated on its own) or a DELETE; a few are ``garbled`` bytes instead. The same number gives the
same reviews, so hypothesis's shrinking and a printed number reproduce a failure.

Numbers JSON cannot carry as Python values (``1e400``, 5,000 digits: past CPython's 4,300-digit
conversion limit) are written into the encoded body as raw tokens.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

__all__ = ["PER_SEED", "Review", "batch", "garbled", "members", "mutate"]

PER_SEED = 100
GARBLED_EVERY = 20  # one review in this many is garbled bytes instead

# Raw JSON numbers, spliced into the encoded body in place of their marker strings.
_RAW = {
    "\u0001n0": b"1e400",
    "\u0001n1": b"-1e400",
    "\u0001n2": b"1e30000000",
    "\u0001n3": b"9" * 5000,
    "\u0001n4": b"-" + b"9" * 5000,
    "\u0001n5": b"0." + b"0" * 4000 + b"1",
    "\u0001n6": b"18446744073709551616",
    "\u0001n7": b"-9223372036854775809",
}
_USERS: tuple[Any, ...] = (
    {"username": "alice", "uid": "u-a", "groups": ["team-a", "system:authenticated"], "extra": {"k": ["v"]}},
    {"username": "system:serviceaccount:team-a:ci"},
    {},
    {"username": 7, "groups": "x", "extra": []},
    None,
)


_BIG = ("9" * 5000, "1" + "0" * 400 + "Ki", "9" * 400 + "g", "9" * 400 + "m", "1 Gi")
_ODD_QUANTITIES = "1e400 -1 1e30000000 0.000000001m 1e-400 NaN Infinity -Inf 1Ei 999999999999Ei -0 1..2 1e 0x10 １ 1gb"
QUANTITIES = (*_ODD_QUANTITIES.split(), *_BIG)
_WORDS = "x/y - ../../etc ${x} %s%n UPPER_case true null 0 default volcano vbridge"
ODD_STRINGS = ("", " ", "\x00", "\ud800", "\U0001f600" * 50, "a" * 70_000, "a" * 254 + ".b", *_WORDS.split())
NUMBERS = (0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 10**300, 1e308, -1e308, 5e-324, 0.5, -0.0)


def _deep(rng: random.Random) -> Any:
    depth = rng.choice((50, 200, 600))  # past msgspec's own limit (500), under CPython's
    out: Any = rng.choice(([], {}, "x", 1))
    for _ in range(depth):
        out = [out] if rng.random() < 0.5 else {"a": out}
    return out


def value(rng: random.Random) -> Any:
    """A hostile value: another type, a huge or odd number or string, deep nesting, a quantity."""
    pick = rng.randrange(11)
    if pick == 0:
        return rng.choice((None, True, False, [], {}, [None], {"": None}))
    if pick == 1:
        return rng.choice(NUMBERS)
    if pick == 2:
        return rng.choice(tuple(_RAW))
    if pick == 3:
        return rng.choice(ODD_STRINGS)
    if pick == 4:
        return _deep(rng)
    if pick in (5, 6):
        return rng.choice(QUANTITIES)
    if pick == 7:
        return [value(rng) for _ in range(rng.randrange(4))]
    if pick == 8:
        return {rng.choice(("name", "spec", "x", "", "metadata", "replicas")): value(rng)}
    if pick == 9:
        return rng.randrange(-(2**70), 2**70)
    return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 12)))


def members(obj: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, node) of the object, the root first; none inside deep nesting."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    todo: list[tuple[tuple[Any, ...], Any]] = [((), obj)]
    while todo:
        path, node = todo.pop()
        out.append((path, node))
        if len(path) > 24:
            continue
        if isinstance(node, dict):
            todo.extend(((*path, key), child) for key, child in node.items())
        elif isinstance(node, list):
            todo.extend(((*path, i), child) for i, child in enumerate(node))
    return out


def _pick(rng: random.Random, obj: Any) -> tuple[tuple[Any, ...], Any]:
    """A member by a random walk from the root (never the root when it has members): each step
    goes one level down, stopping at a leaf or with probability 1/4 (as deep as 24 levels)."""
    path: tuple[Any, ...] = ()
    node = obj
    while node and isinstance(node, (dict, list)) and len(path) <= 24 and (not path or rng.random() >= 0.25):
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path, node = (*path, key), node[key]
    return path, node


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def mutate(rng: random.Random, seed: Any, count: int) -> Any:
    """A copy of ``seed`` with ``count`` mutations, each at a member ``_pick`` chose."""
    obj: Any = json.loads(json.dumps(seed))
    for _ in range(count):
        path, node = _pick(rng, obj)
        action = rng.randrange(6)
        if not path:
            obj = value(rng)
        elif action == 0:
            del _at(obj, path[:-1])[path[-1]]
        elif action == 1 and isinstance(node, dict):
            node[rng.choice(("zz", "", "x" * 300, "spec", "\u00e9"))] = value(rng)
        elif action == 2 and isinstance(node, list):
            node.append(value(rng))
        else:
            _at(obj, path[:-1])[path[-1]] = value(rng)
    return obj


def _encode(body: Any) -> bytes:
    raw = json.dumps(body).encode()
    if b"\\u0001n" in raw:
        for marker, token in _RAW.items():
            raw = raw.replace(json.dumps(marker).encode(), token)
    return raw


def garbled(rng: random.Random, raw: bytes) -> bytes:
    """``raw`` cut short, with bytes flipped, dropped or inserted, or replaced by random bytes."""
    data = bytearray(raw)
    pick = rng.randrange(4)
    if pick == 0:
        return bytes(data[: rng.randrange(len(data) + 1)])
    if pick == 3 or not data:
        return rng.randbytes(rng.randrange(1, 400))
    for _ in range(rng.randrange(1, 8)):
        at = rng.randrange(len(data))
        if pick == 1:
            data[at] = rng.randrange(256)
        elif rng.random() < 0.5:
            del data[at]
        else:
            data.insert(at, rng.choice(b'{}[]",:\\0-e\x00\xff'))
    return bytes(data)


def _envelope(kind: tuple[str, str, str], uid: str, operation: str, obj: Any, old: Any, user: Any) -> dict[str, Any]:
    group, version, name = kind
    request = {
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": name},
        "operation": operation,
        "namespace": "team-a",
        "object": obj,
    }
    if old is not None:
        request["oldObject"] = old
    if user is not None:
        request["userInfo"] = user
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@dataclasses.dataclass(frozen=True)
class Review:
    body: bytes
    uid: str | None  # the uid the answer must carry; None for garbled bytes (best effort)
    operation: str


def batch(number: int, seeds: list[Any], kind: tuple[str, str, str], size: int = PER_SEED) -> list[Review]:
    """``size`` reviews of ``kind`` derived from ``seeds`` by ``random.Random(number)``."""
    rng = random.Random(number)
    out = []
    for i in range(size):
        seed = rng.choice(seeds)
        uid = f"fz-{number}-{i}"
        operation = rng.choice(("CREATE", "CREATE", "UPDATE", "UPDATE", "DELETE"))
        obj = mutate(rng, seed, rng.randint(1, 4))
        old = mutate(rng, seed, rng.randint(0, 2)) if operation == "UPDATE" else None
        if operation == "DELETE":
            old, obj = obj, None
        raw = _encode(_envelope(kind, uid, operation, obj, old, rng.choice(_USERS)))
        if i % GARBLED_EVERY == GARBLED_EVERY - 1:
            out.append(Review(garbled(rng, raw), None, operation))
        else:
            out.append(Review(raw, uid, operation))
    return out
