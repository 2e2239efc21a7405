"""One adapter per workload kind, in one folder per kind family, listed explicitly in ``registry``.

An adapter is pure: ``translate(obj, ctx)`` takes a parsed API object and a :class:`base.Context`
of cluster facts (namespace labels and annotations, queues, priority classes) and returns a
:class:`base.Translation`: the object as it should be admitted, and the PodGroup it needs. No
client, clock or environment inside. ``None`` means "not ours": admit unchanged.

Families: ``spark`` (SparkApplication, spark-submit pods, Spark's sizing and conf rules),
``kubeflow`` (TFJob, PyTorchJob, MPIJob v1 and v2beta1, their operators' pods), ``vcjob``
(Volcano Jobs: admission, and the pure core of their controller). ``podview`` is the narrow
decoding of pod reviews that the pod adapters share. The webhook configuration, the chart
entries and the reconcilers are built from ``registry.ADAPTERS``.
"""

__all__ = ["base", "kubeflow", "podview", "registry", "spark", "vcjob"]
