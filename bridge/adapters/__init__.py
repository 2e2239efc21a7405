"""One adapter per workload kind, in one folder per kind family, listed explicitly in ``registry``.

An adapter is pure (``base`` holds the contract): ``admit(obj, ctx)`` returns the object as it
should be admitted (``None``: not ours, admit unchanged), ``podgroup(obj, ctx)`` the PodGroup it
needs, ``finished(obj)`` whether the job is over. ``ctx`` is a :class:`base.Context` of cluster
facts (namespace labels and annotations, queues, priority classes). No client, clock or
environment inside.

Families: ``spark`` (SparkApplication, spark-submit pods, Spark's sizing and conf rules),
``kubeflow`` (TFJob, PyTorchJob, MPIJob v1 and v2beta1, XGBoostJob, PaddleJob, JAXJob, their
operators' pods), ``vcjob`` (Volcano Jobs: admission, and the pure core of their controller),
``jobset`` (JobSets, and the stage rule for workloads whose pods arrive in stages),
``scheduling`` (PodGroups and Queues written directly: validated, their queue access checked).
``podview`` is the narrow decoding of pod reviews that the pod adapters share; ``shapes`` the
JSON shape each adapter reads, checked before it sees an object; ``stamping`` the pod-template
stamp the job kinds share (Kubeflow replicas, JobSet replicatedJobs, the SparkConnect server). The
webhook configuration, the chart entries and the reconcilers are built from ``registry.ADAPTERS``;
``vbridge list``'s and ``vbridge explain``'s kinds and the scheduler's "who creates the pods" from
``registry.kinds`` (each job kind's ``base.Workload``).
"""

__all__ = ["base", "jobset", "kubeflow", "podview", "registry", "scheduling", "shapes", "spark", "stamping", "vcjob"]
