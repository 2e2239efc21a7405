"""Server-side PodGroup templates for spark-submit drivers whose image lacks VolcanoFeatureStep.

A template is a PodGroup manifest, as Spark's ``podGroupTemplateFile`` is. Which one applies,
first match wins:

1. the driver pod's annotation ``vbridge.io/podgroup-template`` (set with
   ``--conf spark.kubernetes.driver.annotation.vbridge.io/podgroup-template=NAME``);
2. the basename of ``spark.kubernetes.scheduler.volcano.podGroupTemplateFile`` in the driver's
   conf ConfigMap (the file lives on the submitter's machine; a template of the same name here
   stands in for it);
3. the namespace's annotation ``vbridge.io/podgroup-template``;
4. ``default``, when such a template exists.

Names match with or without ``.yaml``/``.yml``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any

import yaml

from bridge import errors, keys
from bridge.adapters.spark import conf as sparkconf

__all__ = ["choose", "load"]


def _stem(name: str) -> str:
    base = pathlib.PurePosixPath(name).name
    for suffix in (".yaml", ".yml", ".json"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def load(folder: pathlib.Path) -> dict[str, dict[str, Any]]:
    """Every template in ``folder`` by name; a malformed one is a ConfigError naming the file."""
    out: dict[str, dict[str, Any]] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        if path.suffix not in (".yaml", ".yml", ".json"):
            continue
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise errors.ConfigError(f"PodGroup template {path}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("kind") != "PodGroup":
            raise errors.ConfigError(f"PodGroup template {path} must be a PodGroup manifest")
        out[_stem(path.name)] = doc
    return out


def choose(
    templates: Mapping[str, dict[str, Any]],
    *,
    pod_annotations: Mapping[str, str],
    conf: Mapping[str, str],
    namespace_annotations: Mapping[str, str],
) -> tuple[str | None, dict[str, Any] | None]:
    """The template's name and body by the order above; (None, None) when none applies."""
    candidates = (
        pod_annotations.get(keys.TEMPLATE_ANNOTATION),
        conf.get(sparkconf.TEMPLATE_FILE),
        namespace_annotations.get(keys.TEMPLATE_ANNOTATION),
        "default",
    )
    for candidate in candidates:
        if candidate and _stem(candidate) in templates:
            return _stem(candidate), templates[_stem(candidate)]
    return None, None
