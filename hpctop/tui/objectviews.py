"""The k9s habits: ``y`` shows the selected job's objects as YAML, ``l`` follows a pod's log.

Both only read, so read-only mode offers them too. The session provides them
(:class:`~hpctop.runtime.protocols.ObjectViews`): on a live cluster a GET of the owner and its
pods, and the pod log API with ``follow=true`` and the chosen container; on the simulator the
objects as it serves them and log lines it makes up deterministically
(:mod:`hpctop.sources.simulator.logs`). Reads that may block run off Textual's loop; a job with
several pods, or a pod with several containers, asks which one first.
"""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped]

from hpctop.runtime.protocols import LogFeed, ObjectViews
from hpctop.tui.base import ConsoleBase
from hpctop.tui.screens.confirm import PickScreen
from hpctop.tui.screens.textview import TextScreen


def manifests_yaml(objects: list[dict[str, Any]]) -> list[str]:
    """The objects as one YAML stream (``---`` between documents), as lines."""
    text = str(yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, allow_unicode=True))
    return text.splitlines()


class ObjectViewFlows(ConsoleBase):
    """``y`` and ``l`` (see the module doc)."""

    def _views(self) -> ObjectViews | None:
        session = self.session
        if isinstance(session, ObjectViews):
            return session
        self.notify("This source has no objects or logs to show", severity="warning", markup=False)
        return None

    def action_object_view(self, what: str) -> None:
        views = self._views()
        key = self._current_key()
        if views is None:
            return
        if key is None:
            self.notify("No job selected", severity="warning", markup=False)
            return
        shown = "/".join(key)
        if what == "yaml":

            def show(objects: list[dict[str, Any]]) -> None:
                lines = manifests_yaml(objects)
                holder = "the simulated cluster" if self.simulated else "the API server"
                note = f"{len(objects)} object(s), as {holder} has them now"
                self.push_screen(TextScreen(f"YAML of {shown}", lambda: (note, lines)))

            self.off_loop(lambda: views.manifests(key), show, "yaml")
            return
        job = self.snapshot.jobs.get(key)
        pods = [name for _, name in job.pods] if job is not None else []
        if not pods:
            self.notify("This job has no pods (yet): no log to show", severity="warning", markup=False)
            return

        def pod_chosen(pod: str | None) -> None:
            if pod is None:
                return

            def container_chosen(containers: list[str]) -> None:
                if len(containers) == 1:
                    self._follow(views, key[0], pod, containers[0])
                    return
                if not containers:
                    self.notify("The pod lists no container", severity="warning", markup=False)
                    return

                def picked(container: str | None) -> None:
                    if container is not None:
                        self._follow(views, key[0], pod, container)

                self.push_screen(PickScreen(f"Container of {pod}", containers), self.guarded(picked))

            self.off_loop(lambda: views.containers(key[0], pod), container_chosen, "containers")

        if len(pods) == 1:
            pod_chosen(pods[0])
        else:
            self.push_screen(PickScreen(f"Pod of {shown}", pods), self.guarded(pod_chosen))

    def _follow(self, views: ObjectViews, namespace: str, pod: str, container: str) -> None:
        feed: LogFeed = views.follow_log(namespace, pod, container)

        # the simulator writes a made-up log for each pod: said, so nobody reads it as a real job's
        made_up = " (the simulator's made-up log)" if self.simulated else ""

        def read() -> tuple[str, list[str]]:
            lines = feed.lines()
            return feed.note + made_up, lines

        title = f"Log of {namespace}/{pod} [{container}]"
        self.push_screen(TextScreen(title, read, follow=True, on_close=feed.close))
