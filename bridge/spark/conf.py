"""spark.properties text and spark-submit pod facts. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["app_id", "conf_map_name", "parse_properties", "role"]

TEMPLATE_FILE = "spark.kubernetes.scheduler.volcano.podGroupTemplateFile"


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties as Spark writes them: ``key=value`` or ``key value``, # and ! comments."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        for i, ch in enumerate(line):
            if ch in "=:" or ch.isspace():
                key, value = line[:i], line[i + 1 :].strip()
                if ch.isspace() and value[:1] in ("=", ":"):
                    value = value[1:].strip()
                break
        else:
            key, value = line, ""
        out[key.replace("\\:", ":").replace("\\=", "=")] = value.replace("\\:", ":").replace("\\=", "=")
    return out


def role(pod: Mapping[str, Any]) -> str | None:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    value = labels.get("spark-role")
    return value if value in ("driver", "executor") and labels.get("spark-app-selector") else None


def app_id(pod: Mapping[str, Any]) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get("spark-app-selector", ""))


def conf_map_name(pod: Mapping[str, Any]) -> str | None:
    """The driver's conf ConfigMap (``spark-drv-…-conf-map``), from the pod's volumes."""
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        name = (volume.get("configMap") or {}).get("name", "")
        if name.startswith("spark-drv-") and name.endswith("-conf-map"):
            return str(name)
    return None
