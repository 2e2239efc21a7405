"""An async client for the kube-apiserver on httpx; one request function, one error mapping."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from bridge import errors
from bridge.k8s import kubeconfigs

__all__ = ["MERGE", "STRATEGIC", "Client"]

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def _error(response: httpx.Response) -> errors.ApiError:
    try:
        status = response.json()
        return errors.ApiError(response.status_code, status.get("reason", ""), status.get("message", response.text))
    except ValueError:
        return errors.ApiError(response.status_code, response.reason_phrase, response.text[:500])


class Client:
    """``async with Client(conn) as api: await api.request("GET", "/api/v1/nodes")``."""

    def __init__(self, conn: kubeconfigs.Connection, *, connections: int = 16, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {conn.token}"} if conn.token else {}
        self._http = httpx.AsyncClient(
            base_url=conn.server,
            verify=conn.ssl_context(),
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=5.0),
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        )

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> dict[str, Any]:
        content = None if body is None else json.dumps(body).encode()
        response = await self._http.request(
            method,
            path,
            content=content,
            params=params,
            headers={"Content-Type": content_type} if content is not None else None,
        )
        if response.status_code >= 400:
            raise _error(response)
        return response.json() if response.content else {}

    async def stream_lines(self, path: str, params: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Each JSON line of a streaming (watch) response; the read timeout is left to the server."""
        async with self._http.stream("GET", path, params=params, timeout=httpx.Timeout(None, connect=5.0)) as response:
            if response.status_code >= 400:
                await response.aread()
                raise _error(response)
            async for line in response.aiter_lines():
                if line:
                    yield json.loads(line)
