"""Writes that may be repeated: create or replace an object, delete one that may be gone already."""

from __future__ import annotations

from typing import Any

from bridge import errors
from bridge.k8s import client

__all__ = ["create_or_replace", "delete"]


async def create_or_replace(api: client.Client, collection: str, body: dict[str, Any]) -> None:
    """POST ``body`` to ``collection``; when it exists (409), PUT it over the current one with
    that one's resourceVersion. ``body`` itself is left as it was."""
    try:
        await api.request("POST", collection, body=body)
    except errors.ApiError as exc:
        if exc.status != 409:
            raise
        path = f"{collection}/{body['metadata']['name']}"
        current = await api.request("GET", path)
        version = current["metadata"]["resourceVersion"]
        await api.request("PUT", path, body={**body, "metadata": {**body["metadata"], "resourceVersion": version}})


async def delete(api: client.Client, path: str, body: dict[str, Any] | None = None) -> bool:
    """DELETE ``path`` (with DeleteOptions ``body``, if given); an object that is not there (404)
    is no error. True when this request deleted it (or marked it deleted), False when it was gone."""
    try:
        await api.request("DELETE", path, body=body)
    except errors.ApiError as exc:
        if exc.status != 404:
            raise
        return False
    return True
