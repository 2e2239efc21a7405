"""``vbridge job`` and ``vbridge queue``: vcctl's verbs for Volcano Jobs and Queues.

``job suspend``/``job resume`` set the annotation ``vbridge.io/job-command`` to ``AbortJob`` /
``ResumeJob``; the Job controller carries the command out and removes the annotation (vcctl's
``bus.volcano.sh`` Commands are turned into the same annotation). ``queue open``/``queue close``
write the queue's ``status.state`` as a Command would (``controllers.commands.operate_queue``): a
queue closed with PodGroups left is ``Closing`` until they are gone. Admission reads it: only an
Open queue takes new jobs. ``queue list`` adds the queue tree, when there is one,
with each level's allocated and deserved (``queuetree``).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bridge import defaults
from bridge.adapters.vcjob import names
from bridge.k8s import client, paths
from vbridge.commands import connecting, queuetree
from vbridge.controllers import commands as queue_commands

__all__ = ["add_parsers", "job_rows", "queue_rows", "table"]

JOBS = names.API_VERSION
QUEUES = defaults.QUEUE_API


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [list(map(str, header)), *([str(c) for c in r] for r in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def job_rows(items: Sequence[dict[str, Any]]) -> list[list[object]]:
    rows: list[list[object]] = []
    for job in items:
        meta, spec, status = job["metadata"], job.get("spec") or {}, job.get("status") or {}
        replicas = sum(int(t.get("replicas") or 0) for t in spec.get("tasks") or [])
        rows.append(
            [
                meta.get("namespace", ""),
                meta["name"],
                (status.get("state") or {}).get("phase", "Pending"),
                spec.get("queue", ""),
                replicas,
                spec.get("minAvailable", ""),
                *(status.get(k, 0) for k in ("pending", "running", "succeeded", "failed")),
                status.get("retryCount", 0),
            ]
        )
    return rows


def queue_rows(items: Sequence[dict[str, Any]]) -> list[list[object]]:
    return [
        [
            q["metadata"]["name"],
            (q.get("spec") or {}).get("weight", 1),
            (q.get("status") or {}).get("state", "Open"),
            *((q.get("status") or {}).get(k, 0) for k in ("pending", "inqueue", "running")),
        ]
        for q in items
    ]


def _run(args: argparse.Namespace, work: Callable[[client.Client], Awaitable[str]]) -> int:
    conn = connecting.connection(args)

    async def go() -> str:
        async with client.Client(conn) as api:
            return await work(api)

    print(asyncio.run(go()), flush=True)
    return 0


def _job_path(args: argparse.Namespace, name: str | None = None) -> str:
    return paths.resource(
        JOBS, "jobs", namespace=None if getattr(args, "all_namespaces", False) else args.namespace, name=name
    )


def cmd_job(args: argparse.Namespace) -> int:
    async def work(api: client.Client) -> str:
        if args.verb == "list":
            items = (await api.request("GET", _job_path(args))).get("items", [])
            header = ["NAMESPACE", "NAME", "PHASE", "QUEUE", "REPLICAS", "MIN", "PENDING", "RUNNING", "SUCCEEDED"]
            return table([*header, "FAILED", "RETRIES"], job_rows(items))
        if args.verb == "view":
            job = await api.request("GET", _job_path(args, args.name))
            status = job.get("status") or {}
            tasks = [[t["name"], t.get("replicas", 0), t.get("minAvailable", "")] for t in job["spec"]["tasks"]]
            return "\n".join(
                [
                    table(
                        [
                            "NAMESPACE",
                            "NAME",
                            "PHASE",
                            "QUEUE",
                            "REPLICAS",
                            "MIN",
                            "PENDING",
                            "RUNNING",
                            "SUCCEEDED",
                            "FAILED",
                            "RETRIES",
                        ],
                        job_rows([job]),
                    ),
                    f"state: {(status.get('state') or {}).get('message', '')}",
                    table(["TASK", "REPLICAS", "MIN"], tasks),
                ]
            )
        if args.verb in ("suspend", "resume"):
            command = "AbortJob" if args.verb == "suspend" else "ResumeJob"
            body = {"metadata": {"annotations": {names.COMMAND: command}}}
            await api.request("PATCH", _job_path(args, args.name), body=body, content_type=client.MERGE)
            return f"job {args.namespace}/{args.name}: {command} requested"
        await api.request("DELETE", _job_path(args, args.name), body={"propagationPolicy": "Background"})
        return f"job {args.namespace}/{args.name} deleted"

    return _run(args, work)


def cmd_queue(args: argparse.Namespace) -> int:
    async def work(api: client.Client) -> str:
        base = paths.resource(QUEUES, "queues")
        if args.verb == "list":
            items = (await api.request("GET", base)).get("items", [])
            flat = table(["NAME", "WEIGHT", "STATE", "PENDING", "INQUEUE", "RUNNING"], queue_rows(items))
            if not queuetree.is_tree(items):
                return flat
            nodes = (await api.request("GET", paths.resource("v1", "nodes"))).get("items", [])
            return f"{flat}\n\n{queuetree.render(items, nodes)}"
        if args.verb == "create":
            spec: dict[str, Any] = {"weight": args.weight, "reclaimable": True}
            body = {"apiVersion": QUEUES, "kind": "Queue", "metadata": {"name": args.name}, "spec": spec}
            await api.request("POST", base, body=body)
            await api.request(
                "PATCH", f"{base}/{args.name}/status", body={"status": {"state": "Open"}}, content_type=client.MERGE
            )
            return f"queue {args.name} created"
        state = await queue_commands.operate_queue(api, args.name, "OpenQueue" if args.verb == "open" else "CloseQueue")
        return f"queue {args.name} is {state}"

    return _run(args, work)


def _add_verbs(
    sub: Any,
    command: str,
    help_text: str,
    verbs: Sequence[tuple[str, str]],
    func: Callable[[argparse.Namespace], int],
    options: Callable[[argparse.ArgumentParser, str], None],
) -> None:
    """``command`` with one subcommand a verb: each but ``list`` names its object, then ``options``
    adds the verb's own arguments, then the connection options."""
    parser = sub.add_parser(command, help=help_text)
    verb_parsers = parser.add_subparsers(dest="verb", required=True)
    for verb, text in verbs:
        p = verb_parsers.add_parser(verb, help=text)
        if verb != "list":
            p.add_argument("name")
        options(p, verb)
        connecting.add_arguments(p)
        p.set_defaults(func=func)


def _job_options(p: argparse.ArgumentParser, verb: str) -> None:
    if verb == "list":
        p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-n", "--namespace", default="default")


def _queue_options(p: argparse.ArgumentParser, verb: str) -> None:
    if verb == "create":
        p.add_argument("--weight", type=int, default=1)


def add_parsers(sub: Any) -> None:
    """Register ``job`` and ``queue`` on the ``vbridge`` subcommand parser."""
    job_verbs = (
        ("list", "list jobs"),
        ("view", "show one job"),
        ("suspend", "abort a job's pods (AbortJob); it can be resumed"),
        ("resume", "restart a suspended job (ResumeJob)"),
        ("delete", "delete a job and what it owns"),
    )
    _add_verbs(sub, "job", "list, view, suspend, resume or delete Volcano Jobs", job_verbs, cmd_job, _job_options)
    queue_verbs = (
        ("list", "list queues"),
        ("create", "create a queue"),
        ("open", "open a queue"),
        ("close", "close a queue"),
    )
    _add_verbs(sub, "queue", "list, create, open or close Queues", queue_verbs, cmd_queue, _queue_options)
