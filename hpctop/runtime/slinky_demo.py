"""``hpctop --demo-slinky``: the joined Slurm + Kubernetes view offline, from a recording.

Why: the joined view needs a Slinky cluster and a slurmrestd; a user trying hpctop (and
``make screenshots``) has neither. ``slinky_demo.json`` beside this module holds what a real
slurmrestd (Debian's Slurm 22.05, v0.0.38) answered for a few running, waiting and held jobs, and
the Kubernetes objects of a Slinky-shaped cluster (a NodeSet's slurmd pods, a slurm-bridge pod, a
plain Kubernetes Job); ``tests/slurm/record_slinky_demo.py`` records it and says where each
shape comes from. The Kubernetes objects go through the same decoder, store and scheduling core
as a live cluster's; the Slurm answers are served to the real :class:`SlurmRest` client by an
in-memory opener, so the poller, the wire parsers and the join run exactly as against a server.

It is a still picture (nothing moves) and read-only: the recording cannot act.
"""

from __future__ import annotations

import io
import json
import time
import urllib.error
import urllib.request
from email.message import Message
from importlib import resources
from typing import Any

from hpctop.actions.requests import ActionRequest, ActionResult, Actuator, Preview
from hpctop.backends.slurm.act import SlurmActions
from hpctop.errors import ActionRefused
from hpctop.model.backends.queues import policy_from_snapshot
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot, Store
from hpctop.runtime.slurm_console import SlurmConsoleSession
from hpctop.scheduling.core import schedule
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.slurm.poll import SlurmPoller
from hpctop.sources.slurm.rest import SlurmRest

__all__ = ["DEMO_URL", "slinky_demo_session"]

#: what the status bar names as the Slurm side (nothing is reached there)
DEMO_URL = "recorded://slurmrestd"
#: the timestamp every object of tests/fixtures/slinky/cluster.yaml carries
FIXTURE_TIME = "2026-01-01T00:00:00Z"


def _recording() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("hpctop.runtime").joinpath("slinky_demo.json").read_text(encoding="utf-8")
    )
    return data


class _Recorded:
    """An opener for :class:`SlurmRest`: the recorded answers by path, 404 for anything else.

    ``GET .../job/<id>`` (what an action's preview reads) answers the recorded list's entry for
    that job, in the list's own envelope: slurmrestd's answer for one job has the same shape."""

    def __init__(self, paths: list[str], responses: dict[str, Any]) -> None:
        self.answers: dict[str, bytes] = {p: json.dumps(body).encode() for p, body in responses.items()}
        self.answers["/openapi/v3"] = json.dumps({"paths": {path: {} for path in paths}}).encode()
        for path, body in responses.items():
            if path.endswith("/jobs"):
                for job in body.get("jobs", []):
                    one = {**body, "jobs": [job]}
                    self.answers[f"{path.removesuffix('s')}/{job.get('job_id')}"] = json.dumps(one).encode()

    def __call__(self, request: urllib.request.Request, timeout: float = 0.0) -> Any:
        path = request.full_url.removeprefix(DEMO_URL)
        body = self.answers.get(path)
        if body is None or request.get_method() != "GET":
            raise urllib.error.HTTPError(request.full_url, 404, "not recorded", Message(), io.BytesIO(b"{}"))
        return io.BytesIO(body)


class _StillCluster:
    """The Kubernetes side of the recording: one snapshot, scheduled once, that does not move."""

    def __init__(self, snapshot: Snapshot, policy: Policy, result: ScheduleResult, now: float) -> None:
        self.snapshot = snapshot
        self.policy = policy
        self.result = result
        self.now = now
        self.speed = 1.0
        self.source_name = "recording:slinky-demo"
        #: the status bar's connection word: nothing is connected, this is a recording
        self.connection = "recorded"
        self.actuator: Actuator = _Refusing()

    def step(self, virtual_seconds: float) -> None:
        return None

    def refresh(self) -> None:
        return None


class _Refusing:
    """The recording's actuator: every action refused, with the reason."""

    @property
    def read_only(self) -> bool:
        return True

    def preview(self, request: ActionRequest) -> Preview:
        return Preview(request, False, (), refusal="demo: a recorded cluster cannot act")

    def execute(self, request: ActionRequest) -> ActionResult:
        raise ActionRefused("demo: a recorded cluster cannot act")


def slinky_demo_session() -> SlurmConsoleSession:
    """The recorded Slinky cluster with its recorded slurmrestd, joined (read-only)."""
    data = _recording()
    now = float(data["taken_at"])
    store = Store(clock=lambda: now)
    # the fixture's objects were made at its own fixed time; shown 15 minutes before the recording
    # of Slurm, so the two sides' ages read together
    made = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 900))
    for item in data["kubernetes"]:
        text = json.dumps({"type": "ADDED", "object": item["object"]}).replace(FIXTURE_TIME, made)
        raw = text.encode()
        store.apply_raw(item["kind"], raw)
    snapshot = store.snapshot()
    policy = policy_from_snapshot(snapshot, Policy())
    cluster = _StillCluster(snapshot, policy, schedule(snapshot, policy, now), now)
    slurm = data["slurmrestd"]
    client = SlurmRest(
        DEMO_URL,
        user="demo",
        token=None,
        read_only=True,
        opener=_Recorded(slurm["openapi_paths"], slurm["responses"]),
    )
    poller = SlurmPoller(client, interval=float("inf"), wall=lambda: now)
    return SlurmConsoleSession(cluster, poller, SlurmActions(client))
