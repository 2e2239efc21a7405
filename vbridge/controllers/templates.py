"""Loading the server-side PodGroup templates (``podgroup_templates/``) from disk.

Which template a driver gets is pure and lives with Spark: ``bridge.adapters.spark.templates``.
"""

from __future__ import annotations

import pathlib
from typing import Any

import yaml

from bridge import errors
from bridge.adapters.spark import templates

__all__ = ["load"]


def load(folder: pathlib.Path) -> dict[str, dict[str, Any]]:
    """Every template in ``folder`` by name; a malformed one is a ConfigError naming the file."""
    out: dict[str, dict[str, Any]] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        if path.suffix not in templates.SUFFIXES:
            continue
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise errors.ConfigError(f"PodGroup template {path}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("kind") != "PodGroup":
            raise errors.ConfigError(f"PodGroup template {path} must be a PodGroup manifest")
        out[templates.stem(path.name)] = doc
    return out
