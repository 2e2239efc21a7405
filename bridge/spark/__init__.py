"""Spark's own sizing rules, pure: what a driver and its executors will ask Kubernetes for.

``sizing`` follows Spark (and YuniKorn's resourceusage), not the spark-operator's volcano plugin,
which leaves out the default memory overhead (spark-operator#2244). ``conf`` reads
``spark.properties`` text and the spark-submit labels of pods.
"""

__all__ = ["conf", "sizing"]
