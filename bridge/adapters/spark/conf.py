"""spark.properties text and spark-submit pod facts. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys

__all__ = ["TEMPLATE_FILE", "app_id", "conf_map_name", "parse_properties", "role", "with_driver_confs"]

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
    value = labels.get(keys.SPARK_ROLE)
    return value if value in ("driver", "executor") and labels.get(keys.SPARK_APP_SELECTOR) else None


def app_id(pod: Mapping[str, Any]) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(keys.SPARK_APP_SELECTOR, ""))


def conf_map_name(pod: Mapping[str, Any]) -> str | None:
    """The driver's conf ConfigMap (``spark-drv-…-conf-map``), from the pod's volumes."""
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        name = (volume.get("configMap") or {}).get("name", "")
        if name.startswith("spark-drv-") and name.endswith("-conf-map"):
            return str(name)
    return None


def with_driver_confs(containers: list[Any], confs: Mapping[str, str]) -> list[Any] | None:
    """The containers with ``--conf key=value`` pairs added to the Spark driver's arguments.

    The driver container is the one whose args begin ``driver`` (Spark's image entrypoint hands
    the rest to ``spark-submit``, where ``--conf`` outranks the mounted properties file). The
    pairs go right after ``driver``, before the application's own arguments. ``None`` when no
    container is a Spark driver or every pair is already there.
    """
    for i, container in enumerate(containers):
        args = container.get("args") if isinstance(container, Mapping) else None
        if not isinstance(args, list) or not args or args[0] != "driver":
            continue
        present = {args[j + 1] for j in range(len(args) - 1) if args[j] == "--conf"}
        missing = [item for k, v in confs.items() if (pair := f"{k}={v}") not in present for item in ("--conf", pair)]
        if not missing:
            return None
        out = list(containers)
        out[i] = {**container, "args": [args[0], *missing, *args[1:]]}
        return out
    return None
