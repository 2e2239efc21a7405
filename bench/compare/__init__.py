"""The parts of ``bench/scheduler_compare.py``: workloads, contenders, report (see bench/README.md)."""
