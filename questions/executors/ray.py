"""The ray executor: a Ray cluster at an address (``auto``: the one this node belongs
to), or a local one started with ``workers`` CPUs.

The model is put in the object store once; each query is a remote task with one CPU,
``max_retries=1`` (its worker died) and ``retry_exceptions=True`` (it raised).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from ...compiler.errors import InputError
from .base import RETRIES, Failure, Outcome, TaskFn, failure_text, optional_import


class RayExecutor:
    """Remote tasks on a Ray cluster."""

    def __init__(self, address: str | None = None, workers: int = 1):
        self._ray = optional_import("ray", "ray")
        self._started = not self._ray.is_initialized()
        if self._started:
            if address is None:
                self._ray.init(
                    num_cpus=max(1, int(workers)),
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                _connect(self._ray, address)
        self.workers = int(self._ray.cluster_resources().get("CPU", workers))

    def run(self, fn: TaskFn, shared: Any, items: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        if not items:
            return
        ray = self._ray
        remote = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=True)(fn)
        model = ray.put(shared)
        refs = {remote.remote(model, item): i for i, item in enumerate(items)}
        waiting = list(refs)
        try:
            while waiting:
                done, waiting = ray.wait(waiting, num_returns=1)
                for ref in done:
                    try:
                        yield refs[ref], ray.get(ref)
                    except Exception as e:  # RayTaskError / WorkerCrashedError after the retry
                        cause = getattr(e, "cause", None)
                        why = cause if isinstance(cause, BaseException) else e
                        yield refs[ref], Failure(failure_text(why))
        finally:
            for ref in waiting:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()


# ray.init retries an address where nothing listens for minutes before it gives up
CONNECT_SECONDS = 5.0


def _connect(ray: Any, address: str) -> None:
    place = f"--executor ray={address}"
    if address != "auto":
        host, port = _host_port(address)
        if port is not None:
            try:
                socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
            except OSError as e:
                raise InputError(f"no Ray cluster answers there: {e}", place) from None
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except ConnectionError as e:  # "auto" with no cluster on this node, a refused client
        raise InputError(f"no Ray cluster answers there: {e}", place) from None


def _host_port(address: str) -> tuple[str, int | None]:
    """``"ray://h:10001"`` and ``"h:6379"`` -> the host and port to probe."""
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        return parts.hostname or "", parts.port
    except ValueError:  # a port that is not a number: ray.init names the problem
        return parts.hostname or "", None
