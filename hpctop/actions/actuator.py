"""The synchronous adapter: the :class:`~hpctop.actions.requests.Actuator` protocol over the
asynchronous :class:`~hpctop.actions.kube.KubeActions` and the YuniKorn queue editor.

It sits above both (they are coroutines on one HTTP session; the console calls from worker
threads), so neither of them imports the other to be reachable from here: this used to live in
``actions/kube.py`` with a lazy import of ``actions/yunikorn.py``, which imports ``kube``: a cycle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from hpctop.actions.kube import KubeActions, Permission
from hpctop.actions.requests import ActionKind, ActionRequest, ActionResult, Preview, QueueChange
from hpctop.backends.yunikorn.act import YuniKornQueues
from hpctop.errors import ActionFailed

_T = TypeVar("_T")


class _LoopThread:
    """An event loop running in a daemon thread, for callers that are not coroutines."""

    def __init__(self, name: str = "hpctop-actions") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()


class KubeActuator:
    """The :class:`~hpctop.actions.requests.Actuator` protocol over :class:`KubeActions`.

    Each call runs the core's coroutine on ``loop`` (by default a private loop in a daemon thread,
    which then also owns the core's HTTP session) and waits at most ``timeout`` seconds. Calling
    from the thread that runs ``loop`` would deadlock, so it raises instead.
    """

    def __init__(
        self,
        core: KubeActions,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.core = core
        self._own: _LoopThread | None = None
        if loop is None:
            self._own = _LoopThread()
            loop = self._own.loop
        self.loop = loop
        self.timeout = timeout
        #: where YuniKorn runs (its yunikorn-configs ConfigMap and service)
        self.yunikorn_namespace = "yunikorn"
        self._yunikorn: YuniKornQueues | None = None

    @property
    def read_only(self) -> bool:
        return self.core.read_only

    def _yunikorn_queues(self) -> YuniKornQueues:
        if self._yunikorn is None or self._yunikorn.namespace != self.yunikorn_namespace:
            self._yunikorn = YuniKornQueues(self.core, namespace=self.yunikorn_namespace)
        return self._yunikorn

    def preview_yunikorn_queue(self, change: QueueChange) -> Preview:
        preview: Preview = self._call(self._yunikorn_queues().preview(change))
        return preview

    def set_yunikorn_queue(self, change: QueueChange) -> ActionResult:
        result: ActionResult = self._call(self._yunikorn_queues().execute(change))
        return result

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            coro.close()
            raise RuntimeError("KubeActuator called from its own event loop: await KubeActions instead")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ActionFailed(
                f"no answer within {self.timeout:g}s; the outcome is unknown: check the cluster "
                "before retrying"
            ) from None

    def preview(self, request: ActionRequest) -> Preview:
        return self._call(self.core.preview(request))

    def execute(self, request: ActionRequest) -> ActionResult:
        return self._call(self.core.execute(request))

    def permissions(self, namespace: str, kind: str) -> dict[ActionKind, Permission]:
        return self._call(self.core.permissions(namespace, kind))

    def preview_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> Preview:
        return self._call(self.core.preview_queue_stop_policy(kind, name, namespace, policy))

    def set_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> ActionResult:
        return self._call(self.core.set_queue_stop_policy(kind, name, namespace, policy))

    def close(self) -> None:
        """Close the core on its loop, then stop the loop; a second close does nothing.

        The loop thread is taken first so that a second call never schedules ``core.close()``
        on a stopped loop (where the coroutine would never run: a "never awaited" warning).
        """
        own, self._own = self._own, None
        if own is None:
            return
        with_timeout = asyncio.run_coroutine_threadsafe(self.core.close(), self.loop)
        try:
            with_timeout.result(5)
        finally:
            own.stop()


__all__ = ["KubeActuator"]
