"""``vbridge job`` and ``vbridge queue``: vcctl's verbs for Volcano Jobs and Queues, with kubectl's conventions.

``job suspend``/``job resume`` set the annotation ``vbridge.io/job-command`` to ``AbortJob`` /
``ResumeJob``; the Job controller carries the command out and removes the annotation (vcctl's
``bus.volcano.sh`` Commands are turned into the same annotation). ``queue open``/``queue close``
write the queue's ``status.state`` as a Command would (``vbridge.controllers.commands.operate_queue``): a
queue closed with PodGroups left is ``Closing`` until they are gone. Admission reads it: only an
Open queue takes new jobs. ``queue list`` adds the queue tree, when there is one, with each
level's allocated and deserved (``queuetree``).

``list`` and ``view`` print through :mod:`vbridge.commands.output` (``-o wide|name|yaml|json``,
``--no-headers``, ``-l``, ``-w``; the Job columns are ``vbridge list``'s). ``queue create``
checks its name and weight by the Queue's rules (``bridge.models.queue``, which the CRD and
admission read too) before it sends anything (a weight of 0 is a usage error, not the
apiserver's 422). Each verb is a :class:`Verb`: a queue verb is one
more entry in :data:`QUEUE_VERBS` (its options, its function).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bridge import defaults, errors
from bridge.adapters.vcjob import names
from bridge.k8s import client, paths, watching
from bridge.models import queue as queue_model
from vbridge.commands import connecting, interrupts, listing, output
from vbridge.commands import queuetree as queue_table
from vbridge.controllers import commands as command_controller

__all__ = [
    "JOB_VERBS",
    "QUEUE",
    "QUEUE_VERBS",
    "C",
    "Verb",
    "Work",
    "add_parsers",
    "job_delete",
    "job_list",
    "job_resume",
    "job_suspend",
    "job_view",
    "queue_close",
    "queue_create",
    "queue_list",
    "queue_name",
    "queue_open",
    "queue_weight",
]

C = output.Column


def _count(field: str) -> Callable[[dict[str, Any]], object]:
    return lambda q: (q.get("status") or {}).get(field, 0)


QUEUE = output.Kind(
    "Queue",
    defaults.QUEUE_API,
    "queues",
    (
        C("WEIGHT", lambda q: (q.get("spec") or {}).get("weight", 1)),
        C("STATE", lambda q: (q.get("status") or {}).get("state", "Open")),
        *(C(k.upper(), _count(k)) for k in ("pending", "inqueue", "running")),
        C("PARENT", lambda q: (q.get("spec") or {}).get("parent", ""), wide=True),
        C("RECLAIMABLE", lambda q: (q.get("spec") or {}).get("reclaimable", True), wide=True),
    ),
    namespaced=False,
)
Work = Callable[[client.Client, argparse.Namespace], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class Verb:
    name: str
    help: str
    run: Work
    options: Callable[[argparse.ArgumentParser], None] = lambda p: None
    named: bool = True  # takes a NAME
    examples: str = ""


def _run(args: argparse.Namespace) -> int:
    conn = connecting.connection(args)

    async def go() -> None:
        async with client.Client(conn) as api:
            await args.work(api, args)

    interrupts.run(go())
    return 0


# --- job -----------------------------------------------------------------------------------------


def _namespace(args: argparse.Namespace) -> str | None:
    return None if getattr(args, "all_namespaces", False) else connecting.namespace(args)


def _job(args: argparse.Namespace) -> str:
    return f"job {connecting.namespace(args)}/{args.name}"


def _job_hint(args: argparse.Namespace) -> str:
    return f"list them with: vbridge job list -n {connecting.namespace(args)}"


async def _list(api: client.Client, args: argparse.Namespace, kind: output.Kind, what: str) -> None:
    namespace = _namespace(args) if kind.namespaced else None
    t = output.Table(kind.columns, (), namespaced=kind.namespaced)
    if args.watch:
        live = output.watch(api, [t], [(kind, kind.path(namespace), 0)], args, namespace, output.write)
        await output.guarded(live, f"watching {what}")
        return
    params = {"labelSelector": args.selector} if args.selector else None
    listed = await output.guarded(watching.list_objects(api, kind.path(namespace), params=params), f"listing {what}")
    items = output.stamped(kind, listed)  # an object that cannot be decoded is skipped with a warning
    out, err = output.render([dataclasses.replace(t, items=items)], args, namespace)
    output.write(out)
    output.write(err, True)


async def job_list(api: client.Client, args: argparse.Namespace) -> None:
    await _list(api, args, listing.VCJOB, "Volcano Jobs")


async def job_view(api: client.Client, args: argparse.Namespace) -> None:
    kind = listing.VCJOB
    path = kind.path(connecting.namespace(args), args.name)
    job = output.stamped(kind, [await output.guarded(api.request("GET", path), _job(args), hint=_job_hint(args))])[0]
    t = output.Table(kind.columns, [job])
    if args.output in ("json", "yaml"):  # one object, not a List, as `kubectl get KIND NAME` prints it
        output.write(output.single(job, args.output))
        return
    if args.output == "name":
        output.write(output.name_of(job))
        return
    status = job.get("status") or {}
    tasks = [[t_["name"], t_.get("replicas", 0), t_.get("minAvailable", "")] for t_ in job["spec"].get("tasks") or []]
    output.write(
        "\n".join(
            [
                output.render([t], args, None)[0],
                f"state: {(status.get('state') or {}).get('message') or '-'}",
                output.table(["TASK", "REPLICAS", "MINAVAILABLE"], tasks),
            ]
        )
    )


async def _command(api: client.Client, args: argparse.Namespace, command: str) -> None:
    body = {"metadata": {"annotations": {names.COMMAND: command}}}
    path = listing.VCJOB.path(connecting.namespace(args), args.name)
    request = api.request("PATCH", path, body=body, content_type=client.MERGE)
    await output.guarded(request, _job(args), hint=_job_hint(args))
    output.write(f"{_job(args)}: {command} requested")


async def job_suspend(api: client.Client, args: argparse.Namespace) -> None:
    await _command(api, args, "AbortJob")


async def job_resume(api: client.Client, args: argparse.Namespace) -> None:
    await _command(api, args, "ResumeJob")


async def job_delete(api: client.Client, args: argparse.Namespace) -> None:
    path = listing.VCJOB.path(connecting.namespace(args), args.name)
    request = api.request("DELETE", path, body={"propagationPolicy": "Background"})
    await output.guarded(request, _job(args), hint=_job_hint(args))
    output.write(f"{_job(args)} deleted")


def _listing_options(p: argparse.ArgumentParser) -> None:
    output.add_namespaces(p)
    output.add_listing(p)


def _one_namespace(p: argparse.ArgumentParser) -> None:
    output.add_namespaces(p, every=False)


def _view_options(p: argparse.ArgumentParser) -> None:
    output.add_namespaces(p, every=False)
    p.add_argument("-o", "--output", choices=output.FORMATS, default=None, help="wide, name, yaml or json")
    p.set_defaults(no_headers=False, all_namespaces=False)


JOB_VERBS = (
    Verb("list", "list Volcano Jobs", job_list, _listing_options, named=False, examples="vbridge job list -A -o wide"),
    Verb("view", "show one Volcano Job and its tasks", job_view, _view_options, examples="vbridge job view mpi -n ml"),
    Verb("suspend", "abort a job's pods (AbortJob); it can be resumed", job_suspend, _one_namespace),
    Verb("resume", "restart a suspended job (ResumeJob)", job_resume, _one_namespace),
    Verb("delete", "delete a job and what it owns", job_delete, _one_namespace),
)


# --- queue ---------------------------------------------------------------------------------------


def queue_name(text: str) -> str:
    """A Queue's name as the apiserver accepts it (a DNS subdomain), else a usage error."""
    if len(text) > queue_model.NAME_MAX or not re.fullmatch(queue_model.NAME_PATTERN, text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a valid queue name: lower-case letters, digits, '-' and '.', "
            "starting and ending with a letter or digit, at most 253 characters"
        )
    return text


def queue_weight(text: str) -> int:
    """A Queue's ``spec.weight`` by the Queue's rule (``bridge.models.queue.WEIGHT``, the CRD's and
    admission's too), else a usage error with the rule's message."""
    try:
        weight: object = int(text)
    except ValueError:
        weight = text
    why = queue_model.WEIGHT.refusal(weight)
    if why is not None or not isinstance(weight, int):
        raise argparse.ArgumentTypeError(why or text)
    return weight


async def queue_list(api: client.Client, args: argparse.Namespace) -> None:
    await _list(api, args, QUEUE, "Queues")
    if args.watch or args.output:
        return
    items = (await output.guarded(api.request("GET", QUEUE.path()), "listing Queues")).get("items") or []
    if queue_table.is_tree(items):
        nodes = await output.guarded(api.request("GET", paths.resource("v1", "nodes")), "listing nodes")
        output.write("\n" + queue_table.render(items, nodes.get("items") or []))


async def queue_create(api: client.Client, args: argparse.Namespace) -> None:
    spec: dict[str, Any] = {"weight": args.weight, "reclaimable": True}
    body = {"apiVersion": QUEUE.api_version, "kind": "Queue", "metadata": {"name": args.name}, "spec": spec}
    what = f"queue {args.name}"
    await output.guarded(api.request("POST", QUEUE.path(), body=body), what, hint="see it with: vbridge queue list")
    await _state(api, args.name, "Open")
    output.write(f"queue {args.name} created")


async def _state(api: client.Client, name: str, state: str) -> None:
    path = f"{QUEUE.path(name=name)}/status"
    request = api.request("PATCH", path, body={"status": {"state": state}}, content_type=client.MERGE)
    await output.guarded(request, f"queue {name}", hint="list them with: vbridge queue list")


async def _operate(api: client.Client, name: str, action: str) -> None:
    work = command_controller.operate_queue(api, name, action)
    hint = "list them with: vbridge queue list"
    try:
        state = await output.guarded(work, f"queue {name}", hint=hint)
    except errors.InvalidObjectError:  # the Queue is not there
        raise errors.BridgeError(f"queue {name} not found; {hint}") from None
    output.write(f"queue {name} is {state}")


async def queue_open(api: client.Client, args: argparse.Namespace) -> None:
    await _operate(api, args.name, "OpenQueue")


async def queue_close(api: client.Client, args: argparse.Namespace) -> None:
    await _operate(api, args.name, "CloseQueue")


def _create_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--weight", type=queue_weight, default=1, help="share of the cluster against other queues")


def _list_queues(p: argparse.ArgumentParser) -> None:
    output.add_listing(p)
    p.set_defaults(all_namespaces=False)


QUEUE_VERBS = (
    Verb("list", "list queues", queue_list, _list_queues, named=False, examples="vbridge queue list -o wide"),
    Verb(
        "create", "create an Open queue", queue_create, _create_options, examples="vbridge queue create ml --weight 4"
    ),
    Verb("open", "open a queue: admission takes new jobs for it", queue_open),
    Verb("close", "close a queue: admission refuses new jobs; Closing until its PodGroups are gone", queue_close),
)


def _add_verbs(sub: Any, command: str, help_text: str, verbs: Sequence[Verb]) -> None:
    """``command`` with one subcommand a verb: each but ``list`` names its object, then the
    verb's own options, then the connection options."""
    parser = sub.add_parser(command, help=help_text, description=help_text)
    verb_parsers = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in verbs:
        epilog = f"example:\n  {verb.examples}\n" if verb.examples else None
        p = verb_parsers.add_parser(verb.name, help=verb.help, description=verb.help, epilog=epilog)
        if verb.named:
            p.add_argument(
                "name", type=queue_name if command == "queue" else str, metavar="NAME", help=f"the {command}'s name"
            )
        verb.options(p)
        connecting.add_arguments(p)
        p.set_defaults(func=_run, work=verb.run)


def add_parsers(sub: Any) -> None:
    """Register ``job`` and ``queue`` on the ``vbridge`` subcommand parser."""
    _add_verbs(sub, "job", "list, view, suspend, resume or delete Volcano Jobs", JOB_VERBS)
    _add_verbs(sub, "queue", "list, create, open or close Queues", QUEUE_VERBS)
