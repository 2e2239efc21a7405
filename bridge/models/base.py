"""Shared building blocks for the resource models: the base model, quantities, CRD records, and
:class:`Whole`, an integer field's bounds stated once (the model's field and so the CRD's
``minimum``/``maximum``, and the one message every check gives for a value outside them)."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import pydantic
from pydantic import alias_generators

from bridge import validation

__all__ = [
    "INT32_MAX",
    "QUANTITY_SCHEMA",
    "CrdInfo",
    "Int32",
    "K8sModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "PrinterColumn",
    "Quantity",
    "ResourceList",
    "Whole",
]

# A Kubernetes resource.Quantity as CRDs declare it: an int or a string with a unit.
QUANTITY_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
    "x-kubernetes-int-or-string": True,
}
Quantity = Annotated[int | str, pydantic.WithJsonSchema(QUANTITY_SCHEMA)]
ResourceList = dict[str, Quantity]
Int32 = Annotated[int, pydantic.Field(json_schema_extra={"format": "int32"})]
INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Whole:
    """An integer field's rule: a JSON integer (not a bool, not a string) from ``low`` to ``high``.

    The model declares the field ``Annotated`` with :attr:`bounds` (pydantic's ``ge``/``le``,
    which ``bridge.crdgen`` writes as the CRD's ``minimum``/``maximum``) and :attr:`validator` (so
    the model refuses with :meth:`refusal`'s message, before pydantic's own); admission and the
    CLI call :meth:`refusal` too."""

    path: str  # the field as the API names it, e.g. ``spec.weight``
    low: int
    high: int = INT32_MAX

    def refusal(self, value: object) -> str | None:
        """None for a sound value, else the message."""
        if isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high:
            return None
        return f"{self.path} must be an integer from {self.low} to {self.high}, got {validation.shown(value)}"

    def check(self, value: Any) -> Any:
        """pydantic's before-validator: the value, or ValueError with :meth:`refusal`'s message."""
        if value is not None and (why := self.refusal(value)) is not None:
            raise ValueError(why)
        return value

    @property
    def validator(self) -> Any:
        return pydantic.BeforeValidator(self.check)

    @property
    def bounds(self) -> Any:
        return pydantic.Field(ge=self.low, le=self.high)


class K8sModel(pydantic.BaseModel):
    """camelCase on the wire, snake_case in Python, unknown fields preserved."""

    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel,
        populate_by_name=True,
        extra="allow",
    )

    def to_api(self) -> dict[str, Any]:
        """The API body: aliases, and no unset optional fields."""
        return self.model_dump(by_alias=True, exclude_none=True)


class LabelSelectorRequirement(K8sModel):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelector(K8sModel):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


@dataclasses.dataclass(frozen=True)
class PrinterColumn:
    name: str
    json_path: str
    type: str
    priority: int = 0


@dataclasses.dataclass(frozen=True)
class CrdInfo:
    """Everything a CRD manifest needs besides the schema."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    namespaced: bool
    status_subresource: bool
    columns: tuple[PrinterColumn, ...]
    spec_model: type[K8sModel] | None = None
    status_model: type[K8sModel] | None = None
    # Fields beside metadata, for a kind without spec and status (bus.volcano.sh Command).
    root_model: type[K8sModel] | None = None

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"
