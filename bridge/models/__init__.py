"""Pydantic models of the Volcano objects volcano-bridge owns.

No I/O. Field names are Python snake_case with the Kubernetes camelCase names as aliases, so
``Model.model_validate(api_object)`` and ``model.model_dump(by_alias=True)`` round-trip API
bodies. Unknown fields are kept, never dropped. Each resource module exposes a ``CRD`` record
(:class:`bridge.models.base.CrdInfo`) from which ``bridge.crdgen`` writes the CRD manifests in
``crds/``. ``base`` holds what they share; the resources are ``podgroup`` and ``queue``
(``scheduling.volcano.sh/v1beta1``), ``job`` (``batch.volcano.sh/v1alpha1``) and ``command``
(``bus.volcano.sh/v1alpha1``), each schema-compatible with Volcano's CRD. ``queue`` is also the
one home of the Queue's rules (:func:`bridge.models.queue.check`): the CRD, admission, the
scheduler and the CLI read them there. Apart from that check, pure data.
"""

__all__ = ["base", "command", "job", "podgroup", "queue"]
