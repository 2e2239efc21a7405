"""Volcano Jobs (``batch.volcano.sh/v1alpha1``), all pure: no client, no clock, no randomness.

Contract:

- ``adapter``: the admission adapter (Volcano's defaults and validation on CREATE);
- ``names``: the names and keys of everything a Job owns (``<job>-<uid>`` PodGroup, pods
  ``<job>-<task>-<index>``, Service and NetworkPolicy ``<job>``, ConfigMap ``<job>-svc``, Secret
  ``<job>-ssh``), the pods' DNS names, and Volcano's ``volcano.sh/*`` pod keys;
- ``spec``: Volcano's admission defaults and validation, and a typed view of the tasks;
- ``depends``: ``dependsOn``: which tasks may have pods made now, and the gang that can form;
- ``podgroup``: the desired PodGroup (minMember, minTaskMember, queue, priority, minResources);
- ``pods``: the desired pod bodies, stamped with the gang's group and the job's keys;
- ``plugins``: ``svc``, ``env`` and ``ssh``: the objects beside the pods and their changes to
  each pod (the SSH key pair is an argument); ``frameworks``: ``tensorflow``, ``pytorch`` and
  ``mpi``; ``flags``: the plugins' arguments, read as Volcano reads them; ``podedit``: the
  edits they share (environment, ports, volumes);
- ``creation``: pods that could not be created: the Warning Event, the status note, the backoff;
- ``waves``: which missing pods to create now: the gang together, the rest as pods get placed;
- ``pacing``: the token buckets and slow-start batch sizes the controller's calls go through
  (the time is an argument);
- ``lifecycle``: the state machine: pod changes → events → policy actions → phase, status, and
  which pods to delete and create.

Every function takes the Job as an API dict (``spec.defaulted`` first) plus what was observed
(its pods, the time as a string) and returns values; ``vbridge.controllers.vcjobs`` does the I/O.
"""

__all__ = [
    "adapter",
    "creation",
    "depends",
    "flags",
    "frameworks",
    "lifecycle",
    "names",
    "pacing",
    "plugins",
    "podedit",
    "podgroup",
    "pods",
    "spec",
    "waves",
]
