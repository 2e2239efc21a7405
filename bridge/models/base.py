"""Shared building blocks for the resource models: the base model, quantities, CRD records."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import pydantic
from pydantic import alias_generators

__all__ = [
    "QUANTITY_SCHEMA",
    "CrdInfo",
    "Int32",
    "K8sModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "PrinterColumn",
    "Quantity",
    "ResourceList",
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
