"""The distributed-framework job plugins ``tensorflow``, ``pytorch`` and ``mpi``, as Volcano's. Pure.

Each reads its arguments (``bridge.adapters.vcjob.flags``, Volcano's names and defaults) and
changes one pod of the job in place (:func:`apply`); none adds objects beside the pods: the hosts
they name resolve through the ``svc`` plugin's Service, which admission adds for them
(``spec.defaulted``). What each does (``pkg/controllers/job/plugins/distributed-framework``):

- ``tensorflow`` (``--ps``, ``--worker``, ``--chief``, ``--evaluator``: the tasks of each role,
  default their own names; ``--port`` 2222): ``TF_CONFIG`` in every container, the cluster
  (each role's ``<host>:<port>`` list) and this pod's task (its role, or its task's name, and
  index); nothing for a job of one task with one replica;
- ``pytorch`` (``--master`` master, ``--worker`` worker, ``--port`` 23456,
  ``--wait-master-enabled``, ``--wait-master-timeout`` 300, ``--wait-master-image``
  busybox:1.36.1): in every container ``MASTER_ADDR`` (the master's first pod), ``MASTER_PORT``,
  ``WORLD_SIZE`` (master and worker replicas), ``RANK`` (0 for the master, index + 1 for a
  worker, none for other tasks) and the port ``pytorchjob-port``; with wait-master, workers get
  Volcano's ``wait-for-master`` init container; nothing when the job has no master task;
- ``mpi`` (``--master`` master, ``--worker`` worker, ``--port`` 22): the port ``mpijob-port`` in
  every container and init container, and ``MPI_HOST`` (the workers' hosts, comma-separated)
  in the master's; nothing for the master when the job has no worker task.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bridge.adapters.vcjob import flags, names, podedit, spec

__all__ = ["FRAMEWORKS", "apply", "mpi_hosts", "pytorch_env", "tf_config", "wait_for_master_script"]

FRAMEWORKS = ("tensorflow", "pytorch", "mpi")
_TF_ROLES = ("ps", "worker", "chief", "evaluator")  # TF_CONFIG's cluster keys, in Volcano's order
_TF_TYPE_ORDER = ("chief", "worker", "ps", "evaluator")  # which role a task name is first matched to


def _task(job: Mapping[str, Any], name: str) -> spec.Task | None:
    return next((t for t in spec.tasks(job) if t.name == name), None)


def tf_config(job: Mapping[str, Any], task: str, index: int, args: Any = None) -> str | None:
    """``TF_CONFIG`` for pod ``index`` of ``task`` (compact JSON, as Go's encoder writes it)."""
    tasks = spec.tasks(job)
    if len(tasks) == 1 and tasks[0].replicas == 1:
        return None  # a stand-alone TensorFlow job needs no cluster spec
    opts = flags.parse("tensorflow", args)
    job_name = job["metadata"]["name"]
    cluster: dict[str, list[str]] = {}
    for t in tasks:
        role = next((r for r in _TF_ROLES if opts[r] == t.name), None)
        if role is not None:
            cluster[role] = [
                f"{names.domain(job_name, t.name, i, t.template)}:{opts['port']}" for i in range(t.replicas)
            ]
    ordered = {r: cluster[r] for r in _TF_ROLES if cluster.get(r)}  # Go's omitempty drops empty roles
    kind = next((r for r in _TF_TYPE_ORDER if opts[r] == task), task)
    return json.dumps({"cluster": ordered, "task": {"type": kind, "index": index}}, separators=(",", ":"))


def wait_for_master_script(addr: str, port: int, timeout: int) -> str:
    """The shell loop of Volcano's ``wait-for-master`` init container, word for word."""
    return f"""echo "Waiting for master node {addr}:{port} to be ready..."
TIMEOUT={timeout}
ELAPSED=0
until {{ nc -z {addr} {port} || echo > /dev/tcp/{addr}/{port}; }} 2>/dev/null; do
  if [ $ELAPSED -ge $TIMEOUT ]; then
    echo "Timeout waiting for master after ${{TIMEOUT}} seconds"
    exit 1
  fi
  echo "Master not ready yet, retrying in 2 seconds... (elapsed: ${{ELAPSED}}s)"
  sleep 2
  ELAPSED=$((ELAPSED + 2))
done
echo "Master node is ready!\""""


def pytorch_env(job: Mapping[str, Any], task: str, index: int, args: Any = None) -> list[dict[str, Any]] | None:
    """The variables every container of the pod gets; None when the job has no master task."""
    opts = flags.parse("pytorch", args)
    master = _task(job, str(opts["master"]))
    if master is None:
        return None
    job_name = job["metadata"]["name"]
    world = sum(t.replicas for t in spec.tasks(job) if t.name in (opts["master"], opts["worker"]))
    env = [
        {"name": "MASTER_ADDR", "value": names.domain(job_name, master.name, 0, master.template)},
        {"name": "MASTER_PORT", "value": str(opts["port"])},
        {"name": "WORLD_SIZE", "value": str(world)},
    ]
    if task == opts["worker"]:
        env.append({"name": "RANK", "value": str(index + 1)})
    elif task == opts["master"]:
        env.append({"name": "RANK", "value": "0"})
    return env


def mpi_hosts(job: Mapping[str, Any], args: Any = None) -> str | None:
    """``MPI_HOST``: the worker task's hosts, comma-separated (one when its template names a
    hostname); None when the job has no worker task."""
    opts = flags.parse("mpi", args)
    worker = _task(job, str(opts["worker"]))
    if worker is None:
        return None
    count = 1 if (worker.template.get("spec") or {}).get("hostname") else worker.replicas
    job_name = job["metadata"]["name"]
    return ",".join(names.domain(job_name, worker.name, i, worker.template) for i in range(min(count, worker.replicas)))


def _tensorflow(job: Mapping[str, Any], pod_spec: dict[str, Any], task: str, index: int, args: Any) -> None:
    value = tf_config(job, task, index, args)
    if value is not None:
        for c in podedit.containers(pod_spec, init=False):
            podedit.add_env(c, [{"name": "TF_CONFIG", "value": value}])


def _pytorch(job: Mapping[str, Any], pod_spec: dict[str, Any], task: str, index: int, args: Any) -> None:
    env = pytorch_env(job, task, index, args)
    if env is None:
        return
    opts = flags.parse("pytorch", args)
    port = int(opts["port"])
    if task == opts["worker"] and opts["wait-master-enabled"]:
        inits = pod_spec.setdefault("initContainers", [])
        if not any(c.get("name") == "wait-for-master" for c in inits):
            script = wait_for_master_script(env[0]["value"], port, int(opts["wait-master-timeout"]))
            inits.append(
                {"name": "wait-for-master", "image": opts["wait-master-image"], "command": ["sh", "-c", script]}
            )
    for c in podedit.containers(pod_spec, init=False):
        podedit.open_port(c, "pytorchjob-port", port)
        podedit.add_env(c, env)


def _mpi(job: Mapping[str, Any], pod_spec: dict[str, Any], task: str, index: int, args: Any) -> None:
    opts = flags.parse("mpi", args)
    env = []
    if task == opts["master"]:
        hosts = mpi_hosts(job, args)
        if hosts is None:
            return
        env = [{"name": "MPI_HOST", "value": hosts}]
    for c in podedit.containers(pod_spec):
        podedit.open_port(c, "mpijob-port", int(opts["port"]))
        if env:
            podedit.add_env(c, env)


_APPLY = {"tensorflow": _tensorflow, "pytorch": _pytorch, "mpi": _mpi}


def apply(job: Mapping[str, Any], pod: dict[str, Any], *, task: str, index: int) -> None:
    """Change ``pod`` in place as the job's framework plugins ask (in the order of FRAMEWORKS)."""
    enabled = (job.get("spec") or {}).get("plugins") or {}
    for name in FRAMEWORKS:
        if name in enabled:
            _APPLY[name](job, pod["spec"], task, index, enabled[name])
