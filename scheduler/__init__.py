"""The bundled gang scheduler (planned, issue 4).

Contract: the core is pure, ``(snapshot, config, now) -> plan``; a plan is an ordered list of
allocate/pipeline/evict operations committed all-or-nothing; I/O (cache, binder, status
writers) lives in separate modules around the core.
"""

__all__: list[str] = []
