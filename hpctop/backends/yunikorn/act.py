"""YuniKorn queue priority and quota, through its ``yunikorn-configs`` ConfigMap (SCHEDULERS.md §4.3,
§9.2).

Why the ConfigMap: YuniKorn's REST API only reads; a queue's ``priority.offset`` property and its
``resources.guaranteed``/``max`` live in ``queues.yaml`` inside that ConfigMap, which YuniKorn
hot-reloads. So a change is: read the ConfigMap, change the one queue in the parsed document, ask
YuniKorn to validate the result (``POST .../proxy/ws/v1/validate-conf``: a config it rejects
would stop every later reload), then one merge patch of ``data["queues.yaml"]`` carrying the
ConfigMap's resourceVersion, the server's dry run first. The patch is sent by the actions engine
(:meth:`~hpctop.actions.engine.core.ActionEngine.carry_out`), so its rules hold unchanged: access
review before sending, audit records, a concurrent edit is a 409 (never overwritten), a 403
explained and not retried, a lost answer settled by re-reading. Its flow differs from a job's
only before the send (YuniKorn's own validation, no read in read-only mode), which is why it has a
preview of its own; :class:`YuniKornQueuePlan` is its table entry (what ``permissions()`` offers).

What it costs: the file is re-serialised from the parsed YAML, so its comments and layout are
not kept. The preview says so, with the number of comment lines lost, and shows every changed
line of ``queues.yaml``, so the user confirms the exact text. The document goes to
``validate-conf`` as JSON, which YAML parsers read (the transport sends JSON bodies only).
Refused before anything is sent: read-only mode, a gzipped config (``queues.yaml.gz``), no
``yunikorn-configs`` ConfigMap (only Helm's ``yunikorn-defaults``: create the override first), a
queue the file does not name (a dynamic queue made by a placement rule), quota on ``root``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import yaml  # type: ignore[import-untyped]

from hpctop.actions.engine.core import ActionEngine
from hpctop.actions.engine.objects import status_message
from hpctop.actions.engine.plan import ActionTable, KindPlan, Need
from hpctop.actions.engine.targets import FIELD_MANAGER, MERGE_PATCH, Seen, Step, Target
from hpctop.actions.requests import (
    YUNIKORN_QUEUE,
    ActionKind,
    ActionRequest,
    ActionResult,
    Preview,
    QueueChange,
    yunikorn_request,
)
from hpctop.errors import ActionFailed, ActionRefused
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.transport import ReadOnlyViolation

NAMESPACE = "yunikorn"
CONFIGMAP = "yunikorn-configs"
KEY = "queues.yaml"
SERVICE = "yunikorn-service:9080"
INT32 = 2**31 - 1


def _load(text: str) -> Any:
    return yaml.safe_load(text)


def _dump(doc: Any) -> str:
    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True))


def _find(doc: Any, partition: str, path: str) -> dict[str, Any] | None:
    """The queue mapping at ``path`` (``root.a.b``) in ``partition``, or None."""
    if not isinstance(doc, dict):
        return None
    for part in doc.get("partitions") or []:
        if not isinstance(part, dict) or part.get("name", "default") != partition:
            continue
        level: Any = part.get("queues") or []
        found: dict[str, Any] | None = None
        for name in path.split("."):
            found = next((q for q in level if isinstance(q, dict) and q.get("name") == name), None)
            if found is None:
                return None
            level = found.get("queues") or []
        return found
    return None


def _apply(queue: dict[str, Any], change: QueueChange) -> list[str]:
    """Change ``queue`` in place; what changed, one line each."""
    out: list[str] = []
    if change.priority_offset is not None:
        props = queue.setdefault("properties", {}) or {}
        queue["properties"] = props
        before = props.get("priority.offset")
        props["priority.offset"] = str(change.priority_offset)
        was = before if before is not None else "(unset)"
        out.append(f"properties.priority.offset: {was} → {change.priority_offset}")
    for which, values in (("guaranteed", change.guaranteed), ("max", change.maximum)):
        if not values:
            continue
        resources = queue.setdefault("resources", {}) or {}
        queue["resources"] = resources
        block = resources.setdefault(which, {}) or {}
        resources[which] = block
        for name, value in values.items():
            before = block.get(name)
            block[name] = value
            out.append(f"resources.{which}.{name}: {before if before is not None else '(unset)'} → {value}")
    return out


class YuniKornQueues:
    """Previews and sets a YuniKorn queue's priority offset and quota, with ``actions``' client,
    audit log and reviews. ``namespace`` is YuniKorn's; only the ``default`` partition exists on
    Kubernetes."""

    def __init__(self, actions: ActionEngine, namespace: str = NAMESPACE, partition: str = "default") -> None:
        self.actions = actions
        self.namespace = namespace
        self.partition = partition
        #: (queue, change) → what the last preview saw and the file it would write
        self._seen: dict[tuple[str, str], tuple[Seen, str]] = {}

    @property
    def path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/configmaps/{CONFIGMAP}"

    @property
    def validate_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/services/{SERVICE}/proxy/ws/v1/validate-conf"

    def request(self, change: QueueChange) -> ActionRequest:
        return yunikorn_request(change)

    @staticmethod
    def _static_refusal(change: QueueChange) -> str | None:
        if change.queue != "root" and not change.queue.startswith("root."):
            return f"{change.queue!r} is not a YuniKorn queue path (root.<parent>.<queue>)"
        if change.priority_offset is None and not change.guaranteed and not change.maximum:
            return "nothing to change: give a priority offset or a quota"
        if change.priority_offset is not None and not -INT32 - 1 <= change.priority_offset <= INT32:
            return f"priority.offset is an int32; {change.priority_offset} is out of range"
        if (change.guaranteed or change.maximum) and change.queue == "root":
            return "YuniKorn takes no resources on root: its quota is the cluster"
        for name, value in (*change.guaranteed.items(), *change.maximum.items()):
            if not name or not str(value).strip():
                return f"an empty resource name or value ({name!r}: {value!r})"
        return None

    async def _read(self) -> dict[str, Any] | None:
        response = await self.actions.client.request("GET", self.path)
        if response.status == 404:
            return None
        error = response.error()
        if error is not None:
            raise ActionFailed(f"cannot read ConfigMap {self.namespace}/{CONFIGMAP}: {error.detail}")
        body = response.json()
        return body if isinstance(body, dict) else None

    def _plan(self, obj: Mapping[str, Any], change: QueueChange) -> tuple[str, list[str], list[str]] | str:
        """(new queues.yaml, what changed, notes), or why not."""
        data = obj.get("data") or {}
        if KEY not in data:
            if f"{KEY}.gz" in (obj.get("binaryData") or {}) or f"{KEY}.gz" in data:
                return f"{self.namespace}/{CONFIGMAP} holds a gzipped {KEY}.gz: hpctop edits only plain {KEY}"
            return f"{self.namespace}/{CONFIGMAP} has no {KEY} key"
        text = str(data[KEY])
        try:
            doc = _load(text)
        except yaml.YAMLError as exc:
            return f"{KEY} in {self.namespace}/{CONFIGMAP} is not valid YAML ({exc}); fix it by hand first"
        queue = _find(doc, self.partition, change.queue)
        if queue is None:
            return (
                f"{change.queue} is not in {KEY} (partition {self.partition}): a queue made by a placement "
                "rule has no entry to change; add it to the file first"
            )
        changed = _apply(queue, change)
        new = _dump(doc)
        if new == text:
            return f"{change.queue} already has {change.describe()}; nothing to change"
        comments = sum(1 for line in text.splitlines() if line.lstrip().startswith("#") or " #" in line)
        notes = (
            [f"queues.yaml is rewritten from its parsed form: {comments} comment line(s) are not kept"]
            if comments
            else []
        )
        diff = [
            line
            for line in difflib.unified_diff(text.splitlines(), new.splitlines(), lineterm="", n=0)
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
        ]
        notes += [f"queues.yaml {line}" for line in diff[:40]]
        return new, [f"{change.queue}: {c}" for c in changed], notes

    def _patch(self, rv: str, new: str) -> dict[str, Any]:
        return {"metadata": {"resourceVersion": rv}, "data": {KEY: new}}

    def _step(self, body: dict[str, Any]) -> Step:
        return Step("PATCH", self.path, body, "patch", "", "configmaps", content_type=MERGE_PATCH)

    async def preview(self, change: QueueChange) -> Preview:
        """Validate with YuniKorn, then the API server's dry run of the ConfigMap patch."""
        request = self.request(change)
        refusal = self._static_refusal(change)
        if refusal is None and self.actions.read_only:
            refusal = "read-only mode: no action is sent to the cluster"
        if refusal is not None:
            return Preview(request, False, (), refusal=refusal)
        try:
            obj = await self._read()
        except (ServerUnreachable, StreamBroken, ActionFailed) as exc:
            return Preview(request, False, (), refusal=f"cannot read {self.namespace}/{CONFIGMAP}: {exc}")
        if obj is None:
            return Preview(
                request, False, (),
                refusal=(
                    f"no ConfigMap {self.namespace}/{CONFIGMAP}: the queues come from Helm's "
                    f"yunikorn-defaults; create {CONFIGMAP} (the override YuniKorn reads) first"
                ),
            )  # fmt: skip
        plan = self._plan(obj, change)
        if isinstance(plan, str):
            return Preview(request, False, (), refusal=plan)
        new, changed, notes = plan
        seen = Seen(obj, self.actions.clock())
        body = self._patch(seen.rv, new)
        described = (f"PATCH {self.path}?fieldManager={FIELD_MANAGER} {orjson.dumps(body).decode()[:300]}…",)
        try:
            verdict = await self.actions.client.request("POST", self.validate_path, body=_load(new))
        except ReadOnlyViolation:
            return Preview(request, False, (), refusal="read-only mode: no action is sent to the cluster")
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"preview failed: {exc.detail}", requests=described)
        if not verdict.ok:
            return Preview(
                request, False, (),
                refusal=f"YuniKorn's validate-conf failed (HTTP {verdict.status}): {status_message(verdict)}",
                requests=described,
            )  # fmt: skip
        answer = verdict.json()
        if not (isinstance(answer, dict) and answer.get("allowed") is True):
            reason = answer.get("reason") if isinstance(answer, dict) else answer
            return Preview(
                request, False, (), refusal=f"YuniKorn rejects the new {KEY}: {reason}", requests=described
            )
        dry = await self.actions.dry_run(request, self._step(body), described)
        if isinstance(dry, Preview):
            return dry
        self._seen[(change.queue, change.describe())] = (seen, new)
        changes = (
            *changed,
            "YuniKorn's validate-conf: allowed",
            f"server dry run: ConfigMap {self.namespace}/{CONFIGMAP} accepted",
            "YuniKorn reloads the file and applies it to the queue (running allocations stay)",
            *notes,
        )
        return Preview(request, True, changes, requests=described)

    @property
    def target(self) -> Target:
        return Target("ConfigMap", "", "v1", "configmaps", self.namespace, CONFIGMAP)

    async def execute(self, change: QueueChange) -> ActionResult:
        """The patch, with the resourceVersion the preview saw (a fresh preview first when none),
        sent and answered by the engine's rules (access review, audit, 409/403/5xx, settling)."""
        request = self.request(change)
        refusal = self._static_refusal(change)
        if refusal is not None:
            raise ActionRefused(refusal)
        if self.actions.read_only:
            raise ReadOnlyViolation("read-only mode: no action is sent to the cluster")
        key = (change.queue, change.describe())
        if key not in self._seen:
            preview = await self.preview(change)
            if not preview.allowed:
                raise ActionRefused(preview.refusal)
        seen, new = self._seen.pop(key)
        step = self._step(self._patch(seen.rv, new))
        return await self.actions.carry_out(
            request, PLAN, self.target, seen, [step], again=lambda: self.preview(change)
        )


class YuniKornQueuePlan(KindPlan):
    """What a YuniKorn queue offers: its priority offset and quota, through :class:`YuniKornQueues`."""

    kind = YUNIKORN_QUEUE
    job_kind = False

    def offers(self, action: ActionKind) -> list[Need] | str:
        if action == ActionKind.PRIORITY:  # priority offset and quota: queues.yaml in a ConfigMap
            return [("patch", "", "configmaps", "")]
        return "a YuniKorn queue's priority offset and quota are changed (e); it has no other action"

    def static_refusal(self, request: ActionRequest) -> str | None:
        return "a YuniKorn queue is changed through its ConfigMap (YuniKornQueues), not as a job"

    def doing(self, request: ActionRequest, target: Target) -> str:
        return f"changing {KEY} for YuniKorn queue {request.job[2]}"

    def audit_action(self, request: ActionRequest) -> str:
        return "yunikorn-queue"

    def intent(self, request: ActionRequest, steps: Sequence[Step]) -> str:
        return str(request.value)  # the change, not the whole file

    def done_text(self, step: Step, answer: Any) -> str | None:
        return f"{KEY} updated"

    def done(self, request: ActionRequest, target: Target, seen_obj: Mapping[str, Any]) -> str:
        return f"YuniKorn queue {request.job[2]}: {request.value}"


PLAN = YuniKornQueuePlan()
TABLE = ActionTable("yunikorn", plans=(PLAN,))
