"""Pod creates and deletes for Volcano Jobs, paced: at most ``VCJOB_CREATE_IN_FLIGHT`` calls in
flight for the whole controller, however many pods the jobs ask for (Volcano starts one
goroutine a pod).

A job's pods are still asked for together (the scheduler should find the gang whole, not
growing); the pool only keeps a 10,000-pod job from opening 10,000 requests at once and
starving every other caller of the apiserver. What could not be created comes back as
``creation.Failure`` values for the controller to report and retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from bridge import defaults, errors
from bridge.adapters.vcjob import creation
from bridge.k8s import client, paths

__all__ = ["Pool"]

T = TypeVar("T")


class Pool:
    def __init__(self, api: client.Client, *, in_flight: int = defaults.VCJOB_CREATE_IN_FLIGHT) -> None:
        self.api = api
        self._slots = asyncio.Semaphore(in_flight)
        self.in_flight = 0
        self.most_in_flight = 0  # the highest number of calls seen in flight at once

    async def _each(self, items: Iterable[T], call: Callable[[T], Awaitable[None]]) -> None:
        async def one(item: T) -> None:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                await call(item)
            finally:
                self.in_flight -= 1
                self._slots.release()

        async with asyncio.TaskGroup() as group:
            for item in items:
                await self._slots.acquire()  # a task is started only once a slot is free
                group.create_task(one(item))

    async def create(self, namespace: str, bodies: Iterable[dict[str, Any]]) -> list[creation.Failure]:
        """POST each pod (409: it exists, fine); the failures, in the order they happened."""
        failures: list[creation.Failure] = []
        path = paths.resource("v1", "pods", namespace=namespace)

        async def post(body: dict[str, Any]) -> None:
            name = body["metadata"]["name"]
            try:
                await self.api.request("POST", path, body=body)
            except errors.ApiError as exc:
                if exc.status != 409:
                    failures.append(creation.Failure(name, exc.status, exc.message or str(exc)))
            except client.TRANSPORT_ERRORS as exc:
                failures.append(creation.Failure(name, 0, f"{type(exc).__name__} {exc}".strip()))

        await self._each(bodies, post)
        return failures

    async def delete(self, namespace: str, pod_names: Iterable[str]) -> None:
        """DELETE each pod (404: gone already, fine); other errors are raised after all were tried."""
        problems: list[BaseException] = []

        async def delete(name: str) -> None:
            try:
                await self.api.request("DELETE", paths.resource("v1", "pods", namespace=namespace, name=name))
            except errors.ApiError as exc:
                if exc.status != 404:
                    problems.append(exc)
            except client.TRANSPORT_ERRORS as exc:
                problems.append(exc)

        await self._each(pod_names, delete)
        if problems:
            raise problems[0]
