"""volcano-bridge's kernel: what every layer above (``webhooks``, ``scheduler``, ``vbridge``) shares.

Contract: ``bridge`` imports nothing above it (``pyproject.toml``'s layer contracts). Only
``bridge.k8s`` talks to a kube-apiserver (``bridge.facts`` keeps the cluster facts admission
reads through it); ``bridge.probes`` serves probes over plain HTTP, ``bridge.inputs`` reads a
user's files, ``bridge.crdgen`` writes ``crds/`` and ``bridge.defaults`` reads the environment
where asked. Every other module is pure: no client, clock or environment.

- ``bridge.errors``: the one error hierarchy of the project; ``bridge.defaults``: every
  configuration default, defined once; ``bridge.keys``: annotation, label and gate keys.
- ``bridge.models``: pydantic models of the Volcano objects we own (PodGroup, Queue, Job,
  Command); ``bridge.crdgen`` turns them into the CRD manifests in ``crds/``. The Queue's rules
  live in ``bridge.models.queue`` alone (its fields, so the CRD; ``check`` for admission and the
  scheduler; the CLI's ``--weight``).
- ``bridge.k8s``: the HTTP client, kubeconfigs, ``watching.follow`` (the one way to follow a
  watch), Events, Leases, owners, the backend's resolution.
- ``bridge.adapters``: one pure translation per workload kind, listed in ``registry``
  (Spark, Kubeflow, Volcano Jobs, PodGroups, Queues and Commands written directly).
- ``bridge.vcjobcontrol``: the Volcano Job controller's pure decisions (its state machine,
  dependsOn at run time, waves, creation retries and pacing); ``vbridge.controllers.vcjobs`` does their I/O.
- ``bridge.native``: the native backend (Kubernetes' Workload API), pure translation.
- pure rules and helpers: ``bridge.queues`` (queue access), ``bridge.validation`` (sound
  PodGroup specs, pod templates' quantities), ``bridge.podgroups`` (correcting a PodGroup),
  ``bridge.podresources`` and ``bridge.quantity`` (what pods ask for), ``bridge.convert`` (old Kubeflow APIs),
  ``bridge.patching`` (JSON Patch by diffing), ``bridge.translating`` (``vbridge translate``),
  ``bridge.bus`` (bus.volcano.sh Commands and the queue state machine), ``bridge.ratelimit``
  (client-go's token bucket, the time an argument), ``bridge.gates`` (the
  ValidatingAdmissionPolicy that lets only us lift our scheduling gates), ``bridge.certs``
  (the webhook's X.509, the clock an argument), ``bridge.staging`` (a staged group's stages
  annotation, written by its adapter, read by the scheduler and the native backend).
- ``bridge.inputs``: a user's files (and stdin) read within bounds, YAML with bounded aliases;
  ``bridge.probes``: the plain-HTTP probe and metrics server.

What used to sit here moved: Spark's rules to ``bridge.adapters.spark``, Volcano Jobs'
translation to ``bridge.adapters.vcjob`` and their controller's pure core to
``bridge.vcjobcontrol``, the reconcilers to ``vbridge.controllers``, the commands to
``vbridge.commands``; the composition root is ``vbridge``.
"""

__all__ = [
    "adapters",
    "bus",
    "certs",
    "convert",
    "crdgen",
    "defaults",
    "errors",
    "facts",
    "gates",
    "inputs",
    "k8s",
    "keys",
    "models",
    "native",
    "patching",
    "podgroups",
    "podresources",
    "probes",
    "quantity",
    "queues",
    "ratelimit",
    "staging",
    "translating",
    "validation",
    "vcjobcontrol",
]
