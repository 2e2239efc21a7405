"""Per-kind JSON schemas for kubeconform, made from an apiserver's OpenAPI v2 document and CRDs.

kubeconform validates against one JSON schema a kind, found through a ``-schema-location``
template; it would download them, and nothing may be downloaded here. So they are made from
the test bed's own kube-apiserver (``GET /openapi/v2``: exactly the Kubernetes version we run)
and from our CRDs' ``openAPIV3Schema``, as kubernetes-json-schema's openapi2jsonschema does:

- every file is standalone: the definitions a kind refers to, transitively, are embedded;
- strict: an object with ``properties`` accepts no other key (a misspelt or misplaced field
  fails) unless the schema says otherwise (``additionalProperties``, preserve-unknown-fields);
- int-or-string fields (``format: int-or-string``, ``x-kubernetes-int-or-string``) and
  Quantities accept both forms.

Files are ``DIR/<group or v1>/<version>/<kind, lower case>.json``: ``LOCATION`` is the
kubeconform template that finds them.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterable
from typing import Any

__all__ = ["LOCATION", "from_crds", "from_openapi_v2", "write"]

LOCATION = "{{ .Group }}/{{ .ResourceAPIVersion }}/{{ .ResourceKind }}.json"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
_REF = "#/definitions/"


_MAPS = ("properties", "patternProperties", "definitions")  # name -> schema
_LISTS = ("allOf", "anyOf", "oneOf")


def _strict(node: Any) -> Any:
    """A copy of a schema, strict and with the two-form types widened (keywords only: a property
    named "format" is not the keyword)."""
    if not isinstance(node, dict):
        return node
    if node.get("format") == "int-or-string" or node.get("x-kubernetes-int-or-string") is True:
        return {**_INT_OR_STRING, **({"description": node["description"]} if "description" in node else {})}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif (key in _LISTS and isinstance(value, list)) or (key == "items" and isinstance(value, list)):
            out[key] = [_strict(sub) for sub in value]
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = _strict(value)
        else:
            out[key] = value
    if (
        "properties" in out
        and "additionalProperties" not in out
        and out.get("x-kubernetes-preserve-unknown-fields") is not True
    ):
        out["additionalProperties"] = False
    return out


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            yield ref[len(_REF) :]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _path(group: str, version: str, kind: str) -> str:
    # kubeconform's .Group is the part of apiVersion before the slash: "v1" for the core group.
    return f"{group or version}/{version}/{kind.lower()}.json"


def from_openapi_v2(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Relative path -> schema, for every kind the document names."""
    definitions = {name: _strict(body) for name, body in doc["definitions"].items()}
    definitions[_QUANTITY] = {"oneOf": [{"type": "string"}, {"type": "number"}]}
    out: dict[str, dict[str, Any]] = {}
    for body in definitions.values():
        for gvk in body.get("x-kubernetes-group-version-kind") or ():
            needed: dict[str, Any] = {}
            todo = list(_refs(body))
            while todo:
                ref = todo.pop()
                if ref not in needed and ref in definitions:
                    needed[ref] = definitions[ref]
                    todo.extend(_refs(definitions[ref]))
            out[_path(gvk["group"], gvk["version"], gvk["kind"])] = {**body, "definitions": needed}
    return out


def from_crds(crds: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Relative path -> schema, for every served version of each CRD."""
    out: dict[str, dict[str, Any]] = {}
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if schema is not None:
                out[_path(spec["group"], version["name"], spec["names"]["kind"])] = _strict(schema)
    return out


def write(folder: pathlib.Path, *schemas: dict[str, dict[str, Any]]) -> pathlib.Path:
    """Write the schemas under ``folder``; returns it."""
    for part in schemas:
        for rel, schema in part.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(schema))
    return folder
