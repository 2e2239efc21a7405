"""Admission webhooks (planned, issue 3): decode AdmissionReviews, call ``bridge`` adapters, answer.

Contract: thin and typed. Translation lives in ``bridge``; this package only parses reviews,
maps ``bridge.errors`` to allow/deny answers in one place, and serves HTTPS.
"""

__all__: list[str] = []
