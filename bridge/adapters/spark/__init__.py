"""Spark, every part of it: SparkApplications, spark-submit pods, and Spark's own sizing rules.

- ``application``: the SparkApplication adapter (spark-operator ``v1beta2``);
- ``pod``: the spark-submit pod adapter (drivers gated until their group is complete, executors
  grouped); its admission view;
- ``sizing``: what a driver and its executors will ask Kubernetes for, by Spark's rules (and
  YuniKorn's resourceusage), not the spark-operator's volcano plugin, which leaves out the
  default memory overhead (spark-operator#2244);
- ``conf``: ``spark.properties`` text and the spark-submit labels of pods.

All pure. The reconciler that completes a driver's group is ``vbridge.controllers.spark``.
"""

__all__ = ["application", "conf", "pod", "sizing"]
