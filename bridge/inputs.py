"""Files a user hands a command, read within bounds: the one home for reading user input.

Every command that reads a user's file (``vbridge translate``, ``simulate``'s trace, the
scheduler's ``--conf``) reads it here, so a hostile or mistaken input is one clear error
(:class:`bridge.errors.InputError`, ``WHERE: WHAT``), never gigabytes of memory or a stall:

- :func:`read`: the bytes of a file, or of stdin for ``-`` (only when given explicitly). A file
  must be a regular file: a device (``/dev/zero``), a FIFO, a socket or a directory is refused
  at once (opened without blocking, so a FIFO with no writer does not hang us); only a
  kubeconfig may also be a stream (``--kubeconfig <(…)``, as kubectl allows). At most
  ``limit`` bytes are ever read (``defaults.MAX_INPUT_BYTES``, 3 MiB: the apiserver's own cap
  on one request body, so nothing larger could be applied anyway); a larger input is refused
  on its size, before it is read, or as soon as one byte more than the limit has come.
- :func:`yaml_documents`, :func:`yaml_document`: YAML (PyYAML's safe loader) whose aliases are
  kept within the bound kubectl keeps them in. sigs.k8s.io/yaml (go-yaml) refuses a document
  whose alias expansion is excessive (``document contains excessive aliasing``): once more
  than 1,000 nodes are decoded and more than 100 of them came through aliases, their share may
  be at most 99 % up to 400,000 nodes, falling to 10 % at 4,000,000. The same rule here, on the
  node graph before anything is built (its expanded size is counted without expanding it), and
  an alias to a node that contains it is refused outright. So ``<<: *defaults`` and a few shared
  blocks read as kubectl reads them, and a 730-byte "billion laughs" is one line. A document
  that used aliases is built without shared parts (each alias is its own copy, as go-yaml
  decodes it), so changing one place never changes another.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Generator
from typing import Any, BinaryIO

import yaml

from bridge import defaults, errors

__all__ = ["STDIN", "read", "yaml_document", "yaml_documents"]

STDIN = "-"
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)
# go-yaml v2 decode.go (allowedAliasRatio, excessive aliasing), which kubectl's decoder runs.
_ALIAS_FLOOR, _NODES_FLOOR = 100, 1000
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def read(
    spec: str, *, limit: int = defaults.MAX_INPUT_BYTES, stdin: BinaryIO | None = None, streams: bool = False
) -> bytes:
    """The bytes of the regular file ``spec``, or of stdin when ``spec`` is ``-``; at most ``limit``.

    ``streams``: a FIFO or a character device is read too (bounded all the same), for a file
    kubectl reads that way, a kubeconfig given as ``--kubeconfig <(…)``."""
    if spec == STDIN:
        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream without bytes under it (a test's StringIO)
            return _capped("<stdin>", sys.stdin.read(limit + 1).encode(), limit)
        return _capped("<stdin>", stream.read(limit + 1), limit)
    try:
        fd = os.open(spec, os.O_RDONLY | os.O_CLOEXEC | (0 if streams else os.O_NONBLOCK))
    except OSError as exc:
        raise errors.InputError(spec, f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        kind = next((what for test, what in _KINDS if test(info.st_mode)), None)
        stream = streams and (stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode))
        if not stream and (kind is not None or not stat.S_ISREG(info.st_mode)):
            hint = "" if kind == "a directory" else "; to read a stream, give - and send it on stdin"
            raise errors.InputError(spec, f"not a regular file ({kind or 'a special file'}){hint}")
        if info.st_size > limit:
            raise errors.InputError(spec, _too_large(info.st_size, limit))
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # the file may grow while we read: still one byte past the limit at most
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise errors.InputError(spec, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return _capped(spec, b"".join(chunks), limit)


def _capped(where: str, data: bytes, limit: int) -> bytes:
    if len(data) > limit:
        raise errors.InputError(where, _too_large(None, limit))
    return data


def _too_large(size: int | None, limit: int) -> str:
    has = f" {size} bytes," if size is not None else ""
    return f"too large:{has} over the {_mib(limit)} one input may have (the apiserver's cap on a request body)"


def _allowed_ratio(nodes: int) -> float:
    if nodes <= _RATIO_LOW:
        return 0.99
    if nodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


def _expansion(root: yaml.Node, name: str) -> tuple[int, int]:
    """(nodes once every alias is expanded, nodes written) of a document, without expanding it."""
    sizes: dict[int, int] = {}
    inside: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in inside:
            mark = node.start_mark
            raise errors.InputError(f"{name}:{mark.line + 1}:{mark.column + 1}", "an alias to a node that contains it")
        inside.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                total += size(v)
        inside.discard(key)
        sizes[key] = total
        return total

    return size(root), len(sizes)


def _check_aliases(node: yaml.Node, name: str) -> bool:
    """Refuse excessive aliasing (kubectl's rule); whether the document uses aliases at all."""
    expanded, written = _expansion(node, name)
    aliased = expanded - written
    if aliased > _ALIAS_FLOOR and expanded > _NODES_FLOOR and aliased / expanded > _allowed_ratio(expanded):
        mark = node.start_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}"
        raise errors.InputError(
            where, f"document contains excessive aliasing ({expanded} nodes once expanded, {written} written)"
        )
    return aliased > 0


def _unshared(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unshared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshared(v) for v in value]
    return value


def yaml_documents(name: str, text: str) -> Generator[tuple[int, int, Any], None, None]:
    """Each non-empty document of ``text`` with the line and column (from 1) it starts at.

    A document that cannot be read raises :class:`errors.InputError` (``NAME:LINE:COLUMN``) and
    ends the stream; those before it were yielded.
    """
    loader = None
    try:
        loader = yaml.SafeLoader(text)  # checks the characters first
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            shared = _check_aliases(node, name)
            body = loader.construct_document(node)
            if body is not None:
                yield node.start_mark.line + 1, node.start_mark.column + 1, _unshared(body) if shared else body
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name
        what = ": ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise errors.InputError(where, what or "not YAML") from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        char = chr(exc.character) if isinstance(exc.character, int) else str(exc.character)
        raise errors.InputError(f"{name}:{line}:{column}", f"unacceptable character {char!r}: {exc.reason}") from None
    except yaml.YAMLError as exc:
        raise errors.InputError(name, " ".join(str(exc).split())) from None
    except RecursionError:
        raise errors.InputError(name, "nested too deeply to read") from None
    finally:
        if loader is not None:
            loader.dispose()


def yaml_document(name: str, text: str) -> Any:
    """The one document of ``text`` (None when empty); more than one is an error, as for ``yaml.safe_load``."""
    documents = yaml_documents(name, text)
    try:
        first = next(documents, None)
        second = next(documents, None)
    finally:
        documents.close()
    if second is not None:
        raise errors.InputError(f"{name}:{second[0]}:{second[1]}", "expected a single document, found another")
    return None if first is None else first[2]
