"""One adapter per workload kind, listed explicitly in ``registry``.

An adapter is pure: ``translate(obj, ctx)`` takes a parsed API object and a :class:`base.Context`
of cluster facts (namespace labels and annotations, queues, priority classes) and returns a
:class:`base.Translation`: the object as it should be admitted, and the PodGroup it needs. No
client, clock or environment inside. ``None`` means "not ours": admit unchanged.

Kubeflow kinds share ``kubeflow.KubeflowAdapter``; each kind file only declares its replica
field and ordered roles. The webhook configuration and chart entries are generated from
``registry.ADAPTERS``.
"""

__all__ = [
    "base",
    "kubeflow",
    "kubeflow_pod",
    "mpi_job",
    "mpi_job_v1",
    "pytorch_job",
    "registry",
    "spark_application",
    "spark_pod",
    "tf_job",
    "volcano_job",
]
