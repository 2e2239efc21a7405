"""A spark-submit command line in a shell script, and the driver pod spark-submit makes from it. Pure.

``parse`` finds every ``spark-submit`` command line of a script (lines joined at a trailing
backslash, ``#`` comments skipped, shell quoting as ``sh`` reads it; ``${VAR}`` stays as written)
and reads its options as Spark's ``SparkSubmitArguments`` does: ``--conf KEY=VALUE`` (or
``-c``), and the options that stand for a conf key (``--name`` is ``spark.app.name``,
``--num-executors`` is ``spark.executor.instances``, …), which outrank a ``--conf`` of the same
key. The first argument that is not an option is the application; the rest are its arguments.

``driver_pod`` is the driver pod as spark-submit creates it in cluster mode on Kubernetes, with
the labels, annotations, scheduler and sizes the webhook and the reconciler read. The app id is
chosen by spark-submit at launch: offline it is :data:`APP_ID`. Spark's ``VolcanoFeatureStep``
(in ``spark.kubernetes.driver.pod.featureSteps``) names the group on the pod, as Spark does.
A command line that cannot be read is an :class:`Unreadable` (its line and why), never an exception.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shlex
from typing import Any

from bridge import errors, keys, quantity
from bridge.adapters.spark import sizing

__all__ = ["APP_ID", "VOLCANO_STEP", "Submission", "Unreadable", "driver_pod", "parse"]

APP_ID = "spark-" + "0" * 32  # spark-submit picks a random one at launch
VOLCANO_STEP = "org.apache.spark.deploy.k8s.features.VolcanoFeatureStep"
# Options that are conf keys (SparkSubmitArguments.loadEnvironmentArguments: the option wins).
_AS_CONF = {
    "--master": "spark.master",
    "--deploy-mode": "spark.submit.deployMode",
    "--name": "spark.app.name",
    "--driver-memory": "spark.driver.memory",
    "--driver-cores": "spark.driver.cores",
    "--executor-memory": "spark.executor.memory",
    "--executor-cores": "spark.executor.cores",
    "--num-executors": "spark.executor.instances",
    "--total-executor-cores": "spark.cores.max",
    "--jars": "spark.jars",
    "--packages": "spark.jars.packages",
    "--exclude-packages": "spark.jars.excludes",
    "--repositories": "spark.jars.repositories",
    "--py-files": "spark.submit.pyFiles",
    "--files": "spark.files",
    "--archives": "spark.archives",
    "--driver-java-options": "spark.driver.extraJavaOptions",
    "--driver-library-path": "spark.driver.extraLibraryPath",
    "--driver-class-path": "spark.driver.extraClassPath",
    "--queue": "spark.yarn.queue",
    "--principal": "spark.kerberos.principal",
    "--keytab": "spark.kerberos.keytab",
}
_VALUED = {"--class", "--properties-file", "--proxy-user", "--kill", "--status", "--conf", "-c", *_AS_CONF}
_SWITCHES = {"--verbose", "-v", "--supervise", "--help", "-h", "--version", "--usage-error"}
_OPERATORS = set(";&|()<>")


@dataclasses.dataclass(frozen=True)
class Submission:
    line: int  # where the command line starts in the script (1-based)
    conf: dict[str, str]  # every conf key the command line sets, as the driver's spark.properties has it
    main_class: str | None
    resource: str | None  # the application: a jar, a .py or .R file
    arguments: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def cluster_mode(self) -> bool:
        return self.conf.get("spark.submit.deployMode", "client") == "cluster"

    @property
    def on_kubernetes(self) -> bool:
        return self.conf.get("spark.master", "").startswith("k8s://")


@dataclasses.dataclass(frozen=True)
class Unreadable:
    line: int
    reason: str


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines joined at a trailing backslash, each with the number of its first physical line."""
    out: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not parts:
            start = number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        out.append((start, " ".join(parts)))
        parts = []
    if parts:
        out.append((start, " ".join(parts)))
    return out


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def parse(text: str) -> list[Submission | Unreadable]:
    """Every spark-submit command line of the script; [] when there is none."""
    found: list[Submission | Unreadable] = []
    for number, line in _logical_lines(text):
        if "spark-submit" not in line:
            continue
        try:
            words = _words(line)
        except ValueError as exc:  # shlex: No closing quotation, No escaped character
            found.append(Unreadable(number, f"cannot read this command line: {exc}"))
            continue
        for i, word in enumerate(words):
            if pathlib.PurePosixPath(word).name == "spark-submit":
                rest = words[i + 1 :]
                end = next((j for j, w in enumerate(rest) if set(w) <= _OPERATORS), len(rest))
                try:
                    found.append(_submission(number, rest[:end]))
                except errors.ConfigError as exc:
                    found.append(Unreadable(number, str(exc)))
                break
    return found


def _submission(line: int, args: list[str]) -> Submission:
    conf: dict[str, str] = {}
    options: dict[str, str] = {}
    main_class = resource = None
    notes: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word in _SWITCHES:
            i += 1
            continue
        name, eq, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if name not in _VALUED:
            if word.startswith("-"):
                raise errors.ConfigError(f"spark-submit has no option {word}")
            resource = word
            break
        if eq:
            value, i = inline, i + 1
        elif i + 1 < len(args):
            value, i = args[i + 1], i + 2
        else:
            raise errors.ConfigError(f"spark-submit option {word} needs a value")
        if name in ("--conf", "-c"):
            key, sep, setting = value.partition("=")
            if not sep or not key:
                raise errors.ConfigError(f"--conf {value!r} is not KEY=VALUE")
            conf[key] = setting
        elif name == "--class":
            main_class = value
        elif name == "--properties-file":
            notes.append(f"the properties file {value} is on the submitter's machine: its settings are not shown")
        elif name in _AS_CONF:
            options[_AS_CONF[name]] = value
    conf.update(options)
    if resource and "spark.kubernetes.resource.type" not in conf:
        suffix = pathlib.PurePosixPath(resource).suffix.lower()
        conf["spark.kubernetes.resource.type"] = {".py": "python", ".r": "r"}.get(suffix, "java")
    arguments = tuple(args[i + 1 :]) if resource else ()
    return Submission(line, conf, main_class, resource, arguments, tuple(notes))


def _prefixed(conf: dict[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: v for k, v in conf.items() if k.startswith(prefix) and len(k) > len(prefix)}


def _resource_name(app_name: str) -> str:
    """Spark's resource name prefix from the app name: lower case, [a-z0-9-] only."""
    name = re.sub(r"[^a-z0-9-]+", "-", app_name.lower()).strip("-")
    return name or "spark"


def driver_pod(sub: Submission) -> dict[str, Any]:
    """The driver pod spark-submit creates for ``sub`` (cluster mode); raises InvalidObjectError for bad sizes."""
    conf = sub.conf
    app_name = conf.get("spark.app.name") or (sub.main_class or "spark").rsplit(".", 1)[-1]
    prefix = _resource_name(app_name)
    labels = {
        **_prefixed(conf, "spark.kubernetes.driver.label."),
        keys.SPARK_APP_SELECTOR: APP_ID,
        keys.SPARK_ROLE: "driver",
        "spark-app-name": prefix,
    }
    annotations = _prefixed(conf, "spark.kubernetes.driver.annotation.")
    if VOLCANO_STEP in conf.get("spark.kubernetes.driver.pod.featureSteps", "").split(","):
        annotations[keys.GROUP_NAME] = f"{APP_ID}-podgroup"  # as Spark's VolcanoFeatureStep names it
    non_jvm = conf.get("spark.kubernetes.resource.type", "java").lower() in ("python", "r")
    size = sizing.pod_size(sizing.role(conf, "driver"), non_jvm=non_jvm, what="driver")
    memory = f"{size.memory_mib}Mi"
    args = ["driver", "--properties-file", "/opt/spark/conf/spark.properties"]
    if sub.main_class:
        args += ["--class", sub.main_class]
    args += [a for a in (sub.resource, *sub.arguments) if a]
    container: dict[str, Any] = {
        "name": "spark-kubernetes-driver",
        "args": args,
        "resources": {
            "requests": {"cpu": quantity.format_cpu(size.cpu_milli), "memory": memory},
            "limits": {"memory": memory},
        },
    }
    image = conf.get("spark.kubernetes.driver.container.image") or conf.get("spark.kubernetes.container.image")
    if image:
        container = {"name": container["name"], "image": image, **container}
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    scheduler = conf.get("spark.kubernetes.driver.scheduler.name") or conf.get("spark.kubernetes.scheduler.name")
    if scheduler:
        spec["schedulerName"] = scheduler
    meta: dict[str, Any] = {
        "name": conf.get("spark.kubernetes.driver.pod.name") or f"{prefix}-driver",
        "namespace": conf.get("spark.kubernetes.namespace") or "default",
        "labels": labels,
    }
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
