"""The Slinky-shaped cluster of ``tests/fixtures/slinky/cluster.yaml`` on the fake API server.

Why a loader: the slurmd pods are one template per ordinal, and the slurm-bridge pod's Slurm job
id is the one the real slurmctld gave the job that stands for its external job, known only once
the test submitted it. Objects are served as an API server serves them (managedFields, no
apiVersion/kind on list items: the fake server strips them).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from tests.kube.fakeserver import JOBS, NODES, PODS, FakeApiServer, Res

FIXTURE = Path(__file__).parents[1] / "fixtures" / "slinky" / "cluster.yaml"
NODESETS = Res("NodeSet", "slinky.slurm.net", "v1beta1", "nodesets", True)
ORDINALS = range(4)


def _filled(obj: Any, **values: str) -> Any:
    text = json.dumps(obj)
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return json.loads(text)


def _served(res: Res, obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
    meta["managedFields"] = [
        {
            "manager": "slurm-operator",
            "operation": "Update",
            "apiVersion": res.api_version,
            "time": "2026-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {}}, "f:spec": {}},
        }
    ]
    return obj


def slinky_objects(bridge_job: str) -> list[tuple[Res, dict[str, Any]]]:
    """Every object of the fixture, the bridge pod labelled with Slurm job ``bridge_job``."""
    doc = yaml.safe_load(FIXTURE.read_text())
    out: list[tuple[Res, dict[str, Any]]] = []
    out += [(NODES, node) for node in doc["nodes"]]
    out += [(NODESETS, nodeset) for nodeset in doc["nodesets"]]
    out += [(PODS, _filled(doc["slurmd_pod"], i=str(i))) for i in ORDINALS]
    out += [(JOBS, job) for job in doc["jobs"]]
    out += [(PODS, _filled(pod, bridge_job=bridge_job)) for pod in doc["pods"]]
    return out


def serve_slinky(fake: FakeApiServer, bridge_job: str) -> None:
    for res, obj in slinky_objects(bridge_job):
        fake.upsert(res, _served(res, obj))
