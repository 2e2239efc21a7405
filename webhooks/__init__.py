"""Admission webhooks: thin and typed around the pure adapters in ``bridge.adapters``.

- ``reviews``: AdmissionReview v1 in and out (parsing with clear errors, responses). Pure.
- ``admission``: one request → one answer: pick the adapter, build its Context from the cluster
  facts (``bridge.facts``, read through the ``bridge.facts.View`` Protocol), admit
  (``adapter.admit``), diff into a JSON Patch. Every error maps to an answer in one place
  (:func:`admission.answer_error`): bad input is a denial with a message, never a crash or a 500.
- ``configuration``: the MutatingWebhookConfiguration, generated from the adapter registry. Pure.
- ``server``: the HTTPS server (uvicorn, raw ASGI): body cap, read timeout, health endpoints;
  ``limits`` below it: connection pools a silent client cannot fill, the head deadline and size;
  ``tls``: the TLS context and certificate reloading.

The webhooks have no side effects (``sideEffects: None``): PodGroups are made by the
reconcilers in ``vbridge.controllers``, so a dry run or a request rejected later creates nothing.
"""

__all__ = ["admission", "configuration", "limits", "reviews", "server", "tls"]
