"""Volcano Jobs (``batch.volcano.sh/v1alpha1``): their translation, all pure: no client, no
clock, no randomness.

Contract:

- ``adapter``: the admission adapter (Volcano's defaults and validation on CREATE);
- ``names``: the names and keys of everything a Job owns (``<job>-<uid>`` PodGroup, pods
  ``<job>-<task>-<index>``, Service and NetworkPolicy ``<job>``, ConfigMap ``<job>-svc``, Secret
  ``<job>-ssh``), the pods' DNS names, and Volcano's ``volcano.sh/*`` pod keys;
- ``spec``: Volcano's admission defaults and validation, a typed view of the tasks, the phases
  a Job ends in;
- ``depends``: ``dependsOn`` in the PodGroup: the gang that can form first;
- ``podgroup``: the desired PodGroup (minMember, minTaskMember, queue, priority, minResources);
- ``pods``: the desired pod bodies, stamped with the gang's group and the job's keys;
- ``plugins``: ``svc``, ``env`` and ``ssh``: the objects beside the pods and their changes to
  each pod (the SSH key pair is an argument); ``frameworks``: ``tensorflow``, ``pytorch`` and
  ``mpi``; ``flags``: the plugins' arguments, read as Volcano reads them; ``podedit``: the
  edits they share (environment, ports, volumes).

Every function takes the Job as an API dict (``spec.defaulted`` first) and returns values. The
controller's decisions (the state machine, dependsOn at run time, waves, creation retries,
pacing) are
``bridge.vcjobcontrol``, which reads these; ``vbridge.controllers.vcjobs`` does the I/O.
"""

__all__ = [
    "adapter",
    "depends",
    "flags",
    "frameworks",
    "names",
    "plugins",
    "podedit",
    "podgroup",
    "pods",
    "spec",
]
