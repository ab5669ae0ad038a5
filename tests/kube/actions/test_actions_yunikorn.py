"""YuniKorn queue priority and quota through the ``yunikorn-configs`` ConfigMap, against the fake API
server over HTTP: YuniKorn's validate-conf (a kmock route on the service proxy) first, then the
ConfigMap patch's dry run, then the real merge patch with the resourceVersion the preview saw. A
concurrent edit is a 409 (never overwritten), a 403 is explained and not retried, and what cannot be
changed is refused before anything is sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml  # type: ignore[import-untyped]

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import KubeActions, StaleTarget
from hpctop.actions.requests import ActionForbidden, QueueChange
from hpctop.backends.yunikorn.act import CONFIGMAP, YuniKornQueues
from hpctop.errors import ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import CONFIGMAPS, FakeApiServer, Rule

pytestmark = pytest.mark.looptime

NS = "yunikorn"
CM_PATH = f"/api/v1/namespaces/{NS}/configmaps/{CONFIGMAP}"
VALIDATE = f"/api/v1/namespaces/{NS}/services/yunikorn-service:9080/proxy/ws/v1/validate-conf"
QUEUES = """\
# queues of the research cluster
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: research
            queues:
              - name: nlp
                resources:
                  guaranteed: {nvidia.com/gpu: 8}
                  max: {nvidia.com/gpu: 16}
              - name: vision
"""


@pytest.fixture
async def queues(connection: Connection, tmp_path: Path) -> AsyncIterator[YuniKornQueues]:
    core = KubeActions(KubeClient(connection, read_only=False), audit=AuditLog(tmp_path / "audit.jsonl"))
    yield YuniKornQueues(core)
    await core.close()


def seed(fake: FakeApiServer, text: str = QUEUES) -> None:
    fake.upsert(CONFIGMAPS, {"metadata": {"name": CONFIGMAP, "namespace": NS}, "data": {"queues.yaml": text}})


def stored(fake: FakeApiServer) -> Any:
    cm = fake.get(CONFIGMAPS, CONFIGMAP, NS)
    assert cm is not None
    return cm["data"]["queues.yaml"]


def sent(fake: FakeApiServer) -> list[tuple[str, str, str | None]]:
    out = []
    for _, r in fake.log:
        method = str(getattr(r.method, "value", r.method)).upper()
        if method in ("POST", "PATCH") and "selfsubject" not in r.url.path:
            out.append((method, r.url.path, r.params.get("dryRun")))
    return out


def nlp(text: str) -> Any:
    doc = yaml.safe_load(text)
    research = doc["partitions"][0]["queues"][0]["queues"][0]
    return next(q for q in research["queues"] if q["name"] == "nlp")


async def test_priority_offset_and_quota_validated_dry_run_then_patched(
    fake: FakeApiServer, queues: YuniKornQueues
) -> None:
    seed(fake)
    change = QueueChange("root.research.nlp", priority_offset=100, maximum={"nvidia.com/gpu": "24"})
    preview = await queues.preview(change)
    assert preview.allowed, preview.refusal
    assert "root.research.nlp: properties.priority.offset: (unset) → 100" in preview.changes
    assert "root.research.nlp: resources.max.nvidia.com/gpu: 16 → 24" in preview.changes
    assert "YuniKorn's validate-conf: allowed" in preview.changes
    assert any("1 comment line(s) are not kept" in c for c in preview.changes)  # said, not hidden
    assert stored(fake) == QUEUES  # validate and dry run change nothing
    [validated] = fake.yunikorn_validated  # YuniKorn checked the exact new file
    assert nlp(orjson.dumps(validated).decode())["properties"] == {"priority.offset": "100"}

    result = await queues.execute(change)
    assert result.ok and "priority.offset=100, max.nvidia.com/gpu=24" in result.message
    assert sent(fake) == [("POST", VALIDATE, None), ("PATCH", CM_PATH, "All"), ("PATCH", CM_PATH, None)]
    patches = [r for _, r in fake.log if r.url.path == CM_PATH and str(r.method.value).upper() == "PATCH"]
    dry, real = (orjson.loads(r.body) for r in patches)
    assert real == dry and set(real) == {"metadata", "data"} and real["metadata"]["resourceVersion"]
    queue = nlp(stored(fake))
    assert queue["properties"] == {"priority.offset": "100"}
    assert queue["resources"] == {"guaranteed": {"nvidia.com/gpu": 8}, "max": {"nvidia.com/gpu": "24"}}
    vision = yaml.safe_load(stored(fake))["partitions"][0]["queues"][0]["queues"][0]["queues"][1]
    assert vision == {"name": "vision"}  # the rest of the tree as it was


async def test_yunikorn_rejecting_the_file_sends_no_patch(
    fake: FakeApiServer, queues: YuniKornQueues
) -> None:
    seed(fake)
    change = QueueChange("root.research.nlp", guaranteed={"nvidia.com/gpu": "64"})
    preview = await queues.preview(change)
    assert not preview.allowed
    assert (
        "YuniKorn rejects the new queues.yaml: guaranteed resource nvidia.com/gpu exceeds max for "
        "queue root.research.nlp" in preview.refusal
    )
    with pytest.raises(ActionRefused, match="YuniKorn rejects"):
        await queues.execute(change)
    assert [m for m, _, _ in sent(fake)] == ["POST", "POST"]  # validations only
    assert fake.yunikorn_validated[0] is not None
    assert stored(fake) == QUEUES


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (QueueChange("root.research.audio", priority_offset=1), "not in queues.yaml"),
        (QueueChange("root", maximum={"nvidia.com/gpu": "1"}), "no resources on root"),
        (QueueChange("research.nlp", priority_offset=1), "not a YuniKorn queue path"),
        (QueueChange("root.research.nlp"), "nothing to change"),
        (QueueChange("root.research.nlp", priority_offset=2**31), "int32"),
    ],
    ids=["dynamic-queue", "root-quota", "not-a-path", "empty", "int32"],
)
async def test_refused_before_anything_is_sent(
    fake: FakeApiServer, queues: YuniKornQueues, change: QueueChange, why: str
) -> None:
    seed(fake)
    preview = await queues.preview(change)
    assert not preview.allowed and why in preview.refusal
    assert sent(fake) == []


async def test_no_override_configmap_or_a_gzipped_one_is_refused(
    fake: FakeApiServer, queues: YuniKornQueues
) -> None:
    preview = await queues.preview(QueueChange("root.research.nlp", priority_offset=1))
    assert not preview.allowed and "create yunikorn-configs" in preview.refusal
    fake.upsert(
        CONFIGMAPS,
        {"metadata": {"name": CONFIGMAP, "namespace": NS}, "binaryData": {"queues.yaml.gz": "H4s="}},
    )
    preview = await queues.preview(QueueChange("root.research.nlp", priority_offset=1))
    assert not preview.allowed and "gzipped" in preview.refusal
    assert sent(fake) == []


async def test_a_concurrent_edit_is_a_409_and_nothing_is_overwritten(
    fake: FakeApiServer, queues: YuniKornQueues
) -> None:
    seed(fake)
    change = QueueChange("root.research.nlp", priority_offset=5)
    assert (await queues.preview(change)).allowed
    edited = QUEUES.replace("- name: vision", "- name: vision\n                maxapplications: 3")
    seed(fake, edited)  # someone edits the file between preview and confirm
    with pytest.raises(StaleTarget) as caught:
        await queues.execute(change)
    assert stored(fake) == edited  # their edit stands
    fresh = caught.value.preview
    assert fresh is not None and fresh.allowed  # asked again on the new file
    result = await queues.execute(change)
    assert result.ok
    doc = yaml.safe_load(stored(fake))
    assert doc["partitions"][0]["queues"][0]["queues"][0]["queues"][1]["maxapplications"] == 3
    assert nlp(stored(fake))["properties"] == {"priority.offset": "5"}


async def test_a_403_is_explained_and_not_retried(fake: FakeApiServer, queues: YuniKornQueues) -> None:
    seed(fake)
    change = QueueChange("root.research.nlp", priority_offset=5)
    assert (await queues.preview(change)).allowed
    fake.rbac.refused.append(Rule(verbs=("patch",), resources=("configmaps",)))
    with pytest.raises(ActionForbidden, match=r"refused patch configmaps in yunikorn \(403\)") as caught:
        await queues.execute(change)
    assert caught.value.namespace == NS and caught.value.kind == "YuniKornQueue"
    assert [p for m, _, p in sent(fake) if m == "PATCH"] == ["All", None]  # one real PATCH
    assert stored(fake) == QUEUES


async def test_read_only_refuses_before_any_request(fake: FakeApiServer, connection: Connection) -> None:
    seed(fake)
    core = KubeActions(KubeClient(connection, read_only=True))
    try:
        preview = await YuniKornQueues(core).preview(QueueChange("root.research.nlp", priority_offset=1))
        assert not preview.allowed and "read-only" in preview.refusal
    finally:
        await core.close()
    assert fake.log == []
