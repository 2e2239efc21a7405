"""Spark, every part of it: SparkApplications, spark-submit pods, and Spark's own sizing rules.

- ``application``: the SparkApplication adapter (spark-operator ``v1beta2``);
- ``connect``: the SparkConnect adapter (spark-operator ``v1alpha1``): the server and its
  executors in one group, as a client-mode application;
- ``pod``: the spark-submit pod adapter (drivers gated until their group is complete, executors
  grouped); its admission view;
- ``driver``: the pure decisions of the spark-submit reconciler (``vbridge.controllers.spark``):
  a gated driver's group from its conf and template, lifting the gate, client-mode executors'
  groups, the ``vbridge.io/PodGroupReady`` condition of a driver that cannot get its group;
- ``templates``: which server-side PodGroup template a driver gets;
- ``sizing``: what a driver and its executors will ask Kubernetes for, by Spark's rules (and
  YuniKorn's resourceusage), not the spark-operator's volcano plugin, which leaves out the
  default memory overhead (spark-operator#2244); the one reading of Spark's conf keys for sizes;
- ``conf``: ``spark.properties`` text and the spark-submit labels of pods;
- ``submit``: a spark-submit command line of a shell script, and the driver pod it makes
  (``vbridge translate`` of a script).

All pure. The reconciler's I/O is ``vbridge.controllers.spark``.
"""

__all__ = ["application", "conf", "connect", "driver", "pod", "sizing", "submit", "templates"]
