"""Which server-side PodGroup template a spark-submit driver gets. Pure (loading the files is
``vbridge.controllers.templates``).

A template is a PodGroup manifest, as Spark's ``podGroupTemplateFile`` is. Which one applies,
first match wins:

1. the driver pod's annotation ``vbridge.io/podgroup-template`` (set with
   ``--conf spark.kubernetes.driver.annotation.vbridge.io/podgroup-template=NAME``);
2. the basename of ``spark.kubernetes.scheduler.volcano.podGroupTemplateFile`` in the driver's
   conf ConfigMap (the file lives on the submitter's machine; a template of the same name here
   stands in for it);
3. the namespace's annotation ``vbridge.io/podgroup-template``;
4. ``default``, when such a template exists.

Names match with or without ``.yaml``/``.yml``/``.json``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any

from bridge import keys
from bridge.adapters.spark import conf as sparkconf

__all__ = ["SUFFIXES", "choose", "stem"]

SUFFIXES = (".yaml", ".yml", ".json")


def stem(name: str) -> str:
    """A template's name: the basename without its suffix."""
    base = pathlib.PurePosixPath(name).name
    for suffix in SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


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
        if candidate and stem(candidate) in templates:
            return stem(candidate), templates[stem(candidate)]
    return None, None
