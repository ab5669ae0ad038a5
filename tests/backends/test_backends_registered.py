"""Every registered backend keeps the folder contract (issue 10, hpctop/backends/__init__.py).

Why: adding a backend is adding a folder and one registry line, so what a backend owes the rest
of hpctop is checked here, for each one the registry lists, instead of by review:

- its folder holds only ``__init__.py``, ``read.py``, ``wire.py`` and ``act.py``, every folder
  with a ``read.py`` is registered, and no backend's module imports another backend's folder;
- it has fixtures, from upstream (the live-truth corpus records repository, file and commit in its
  ``upstream`` key, a JSON fixture in its sibling ``<stem>.source.yaml``), and
  they hold objects of the kinds it watches (or, for a backend without kinds of its own, the
  labels and annotations it reads);
- every reason code it declares is produced, with its own source prefix, by a case of the
  live-truth corpus or by one of the upstream-shaped objects below, and nothing in its own
  fixtures produces a code it does not declare;
- it names its action plans (``hpctop.backends.<folder>.act``) or says why it is read-only.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import re
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grimp
import orjson
import pytest
import yaml  # type: ignore[import-untyped]

from hpctop.backends import registry
from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.decode import decode_object
from hpctop.model.events import EventType, WatchEvent
from hpctop.model.objects import Reason
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Store

ROOT = Path(__file__).resolve().parents[2]
BACKENDS_DIR = ROOT / "hpctop" / "backends"
LIVE_TRUTH = ROOT / "tests" / "fixtures" / "live_truth"
JSON_FIXTURES = ROOT / "tests" / "fixtures" / "backends"
#: the 2026 gangs and topology corpus, in the same format (tests/backends/gangs/)
GANGS_2026 = ROOT / "tests" / "fixtures" / "gangs_2026"
FOLDER_FILES = {"__init__.py", "read.py", "wire.py", "act.py"}


def _folder(b: Backend) -> str:
    """The folder a registered backend's descriptor was defined in (``kueue``, ``kube_scheduler``)."""
    for path in BACKENDS_DIR.iterdir():
        read = path / "read.py"
        if read.is_file():
            module = importlib.import_module(f"hpctop.backends.{path.name}.read")
            if getattr(module, "BACKEND", None) is b:
                return path.name
    raise AssertionError(f"{b.name}: no hpctop/backends/<folder>/read.py exports it as BACKEND")


def _spec_key(spec: ResourceSpec) -> str:
    """How the live-truth corpus names a resource: ``plural.group/version`` (``pods/v1`` for the core)."""
    return (f"{spec.plural}.{spec.group}" if spec.group else spec.plural) + "/" + spec.version


SPECS: dict[str, ResourceSpec] = {
    _spec_key(spec): spec for b in registry.BACKENDS for alternatives in b.watches for spec in alternatives
}


def _cases(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text())["cases"])


def _store_of(case: dict[str, Any]) -> Store:
    """One live-truth case decoded by the registry's decoders and applied to a store."""
    store = Store(clock=lambda: 1_800_000_000.0)
    for item in case.get("objects", []):
        spec = SPECS[item["res"]]
        obj = copy.deepcopy(item["obj"])
        meta = obj.setdefault("metadata", {})
        if spec.namespaced:
            meta.setdefault("namespace", case["id"])
        decoded = decode_object(spec.kind, orjson.dumps(obj), spec.api_version)
        store.apply(WatchEvent(EventType.ADDED, spec.kind, decoded))
    return store


def _produced() -> dict[str, set[tuple[str, ReasonCode]]]:
    """fixture file name → every (source prefix, code) its cases' jobs carry."""
    out: dict[str, set[tuple[str, ReasonCode]]] = defaultdict(set)
    for path in sorted([*LIVE_TRUTH.glob("*.yaml"), *GANGS_2026.glob("*.yaml")]):
        for case in _cases(path):
            for job in _store_of(case).snapshot().jobs.values():
                for reason in job.reasons:
                    out[path.name].add((reason.source.split(":", 1)[0], reason.code))
    return out


PRODUCED = _produced()


# -- upstream-shaped objects for codes the corpus has no case of -------------------------------------


def _kueue_workload(status: dict[str, Any]) -> Any:
    """A Kueue Workload as kubernetes-sigs/kueue apis/kueue/v1beta2/workload_types.go shapes it."""
    raw = {
        "metadata": {"name": "job-train-1a2b3", "namespace": "team-a", "uid": "wl-1"},
        "spec": {"queueName": "main", "podSets": [{"name": "main", "count": 2}]},
        "status": status,
    }
    return decode_object("Workload.kueue.x-k8s.io", orjson.dumps(raw), "kueue.x-k8s.io/v1beta2")


def _condition(type_: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


def _supplementary() -> Iterator[tuple[str, ReasonCode, list[Reason] | None]]:
    """(backend, code, the reasons its hook gives) for objects shaped as upstream writes them."""
    kueue = registry.backend("kueue")
    assert kueue.job_reasons is not None
    not_reserved = _condition("QuotaReserved", "False", "Pending", "")
    # pkg/controller/core/workload_controller.go: WorkloadEvictedByPodsReadyTimeout
    timed_out = _kueue_workload(
        {
            "conditions": [
                not_reserved,
                _condition("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout"),
            ]
        }
    )
    yield (
        "kueue",
        ReasonCode.GANG_TIMEOUT,
        kueue.job_reasons(JobEvidence(kueue=timed_out), JobState.PENDING, 0),
    )
    # pkg/controller/failurerecovery: WorkloadEvictedDueToNodeFailures = "NodeFailures"
    node_failed = _kueue_workload(
        {"conditions": [not_reserved, _condition("Evicted", "True", "NodeFailures", "Node n1 failed")]}
    )
    yield (
        "kueue",
        ReasonCode.NODE_UNAVAILABLE,
        kueue.job_reasons(JobEvidence(kueue=node_failed), JobState.PENDING, 0),
    )
    # waitForPodsReady backoff: status.requeueState.requeueAt, Requeued=False until it passes
    backing_off = _kueue_workload(
        {
            "conditions": [not_reserved, _condition("Requeued", "False", "PodsReadyTimeout", "")],
            "requeueState": {"count": 2, "requeueAt": "2027-01-15T08:00:00Z"},
        }
    )
    yield "kueue", ReasonCode.BACKOFF, kueue.job_reasons(JobEvidence(kueue=backing_off), JobState.REQUEUED, 0)
    # admitted, pods not yet ready: PodsReady=False WaitForStart
    starting = _kueue_workload(
        {
            "conditions": [
                _condition("QuotaReserved", "True", "QuotaReserved", ""),
                _condition("Admitted", "True", "Admitted", ""),
                _condition("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded"),
            ],
            "admission": {"clusterQueue": "cq"},
        }
    )
    yield "kueue", ReasonCode.STARTING, kueue.job_reasons(JobEvidence(kueue=starting), JobState.STARTING, 2)
    # volcano pkg/scheduler: addPodGroupCondition(job, session, reason, message) passes a plugin's
    # own reason through; any reason but its resource/task ones is Unschedulable
    volcano = registry.backend("volcano")
    assert volcano.job_reasons is not None
    pod_group = decode_object(
        "PodGroup.scheduling.volcano.sh",
        orjson.dumps(
            {
                "metadata": {"name": "pg", "namespace": "team-a"},
                "spec": {"minMember": 1, "queue": "default"},
                "status": {
                    "phase": "Pending",
                    "conditions": [
                        _condition("Unschedulable", "True", "TopologyConflict", "no xPU island fits")
                    ],
                },
            }
        ),
        "scheduling.volcano.sh/v1beta1",
    )
    yield (
        "volcano",
        ReasonCode.UNSCHEDULABLE,
        volcano.job_reasons(JobEvidence(pod_group=pod_group), JobState.PENDING, 1),
    )


def _kai_reasons() -> Iterator[tuple[str, ReasonCode, list[Reason] | None]]:
    """KAI PodGroups with the fit errors its scheduler writes (kai-scheduler/KAI-Scheduler)."""
    kai = registry.backend("kai")
    assert kai.job_reasons is not None

    def group(reason: str, message: str, min_member: int = 1) -> Any:
        condition = {
            "type": "UnschedulableOnNodePool",
            "nodePool": "default",
            "reason": "Unschedulable",
            "message": message,
            "status": "True",
            "reasons": [{"reason": reason, "message": message}],
        }
        raw = {
            "metadata": {"name": "pg-train-1", "namespace": "team-a"},
            "spec": {"minMember": min_member, "queue": "team-a"},
            "status": {"schedulingConditions": [condition]},
        }
        return decode_object("PodGroup.scheduling.run.ai", orjson.dumps(raw), "scheduling.run.ai/v2alpha2")

    # pkg/scheduler/actions/utils/input_jobs.go recordPreemptionDelayFitError
    delayed = group(
        "PreemptionDelayNotElapsed",
        "Workload is within its preemption delay window (5m0s) and may not trigger evictions before "
        "2026-01-01T00:05:00Z",
    )
    yield "kai", ReasonCode.BACKOFF, kai.job_reasons(JobEvidence(pod_group=delayed), JobState.PENDING, 1)
    # pkg/scheduler/actions/common/allocate.go: PodSchedulingErrors
    no_fit = group(
        "PodSchedulingErrors",
        "Resources were not found for pod team-a/train-1-0 due to: "
        "node(s) didn't have enough resources: GPUs",
    )
    yield "kai", ReasonCode.RESOURCES, kai.job_reasons(JobEvidence(pod_group=no_fit), JobState.PENDING, 1)
    # pkg/scheduler/api/common_info/job_errors.go DefaultPodgroupError (the status updater's default)
    generic = group("Unable to schedule podgroup", "Unable to schedule podgroup")
    yield (
        "kai",
        ReasonCode.UNSCHEDULABLE,
        kai.job_reasons(JobEvidence(pod_group=generic), JobState.PENDING, 1),
    )
    # minMember 3 with one pod made so far
    partial = group("PodSchedulingErrors", "Resources were found for 1 pods while 3 are required", 3)
    yield (
        "kai",
        ReasonCode.GANG_INCOMPLETE,
        kai.job_reasons(JobEvidence(pod_group=partial), JobState.PENDING, 1),
    )


SUPPLEMENTARY: dict[str, set[ReasonCode]] = defaultdict(set)
for _name, _code, _reasons in (*_supplementary(), *_kai_reasons()):
    assert _code in {r.code for r in _reasons or ()}, f"{_name}: the object meant to produce {_code} did not"
    SUPPLEMENTARY[_name].add(_code)

#: the source prefix a backend's reasons carry (``kueue:Workload.QuotaReserved``)
PREFIX = {
    "kube-scheduler": "pod",
    "kueue": "kueue",
    "volcano": "vc",
    "coscheduling": "coscheduling",
    "yunikorn": "yk",
    "kai": "kai",
    "dra": "dra",  # a NotReady ComputeDomain (hpctop.backends.dra.read.with_domain)
    "workload-api": "k8s",
}

CASES = [pytest.param(b, id=b.name) for b in registry.BACKENDS]


def test_the_registry_lists_every_backend_hpctop_reads() -> None:
    names = [b.name for b in registry.BACKENDS]
    assert len(names) == len(set(names))
    assert set(names) >= {
        "kube-scheduler",
        "kueue",
        "volcano",
        "yunikorn",
        "coscheduling",
        "kubeflow",
        "jobset",
        "lws",
        "slinky",
    }
    folders = {p.name for p in BACKENDS_DIR.iterdir() if (p / "read.py").is_file()}
    assert folders == {_folder(b) for b in registry.BACKENDS}, "a backend folder is not registered"


@pytest.mark.parametrize("backend", CASES)
def test_its_folder_holds_only_the_contract_files(backend: Backend) -> None:
    folder = BACKENDS_DIR / _folder(backend)
    files = {p.name for p in folder.iterdir() if p.name != "__pycache__"}
    assert files <= FOLDER_FILES, f"{folder}: {sorted(files - FOLDER_FILES)} outside the contract"
    assert (folder / "__init__.py").read_text().startswith('"""'), "the folder's docstring says what it is"


def test_no_backend_imports_another_backends_folder() -> None:
    graph = grimp.build_graph("hpctop")
    folders = {_folder(b) for b in registry.BACKENDS}
    for folder in folders:
        prefix = f"hpctop.backends.{folder}"
        for module in (m for m in graph.modules if m == prefix or m.startswith(prefix + ".")):
            for imported in graph.find_modules_directly_imported_by(module):
                parts = imported.split(".")
                if len(parts) > 2 and parts[:2] == ["hpctop", "backends"] and parts[2] in folders:
                    assert parts[2] == folder, f"{module} imports {imported}"


def test_the_independence_contract_lists_every_backend() -> None:
    """import-linter's "No backend imports another backend" names its modules one by one (the
    registry and contract beside them must stay importable by all), so a new folder must join it."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (independence,) = [c for c in contracts if c["type"] == "independence"]
    assert set(independence["modules"]) == {f"hpctop.backends.{_folder(b)}" for b in registry.BACKENDS}


def _check_upstream(doc: dict[str, Any], name: str) -> None:
    """``upstream`` (and each of ``also``) names a repository, a file in it and a 40-digit commit."""
    for source in [doc["upstream"], *doc.get("also", [])]:
        assert set(source) == {"repo", "path", "commit"}, f"{name}: {source}"
        assert source["repo"].count("/") == 1 and source["path"], f"{name}: {source}"
        assert len(source["commit"]) == 40 and int(source["commit"], 16) >= 0, f"{name}: {source}"


def _json_source(path: Path) -> dict[str, Any]:
    """A JSON fixture's provenance, as an ``upstream`` record.

    Either the sibling ``<stem>.source.yaml`` (JSON has no comments, and the Kubernetes fixtures are
    handed to decoders and the fake server as they are, so the record stays out of them), or, for a
    foreign API's documents (slurmrestd's), the document's own top-level ``source``: a mapping with
    ``repository``/``path``/``commit``, or a sentence naming ``github.com/<owner>/<name>`` and
    ``(<path>, commit <sha>)``.
    """
    source = path.with_name(path.stem + ".source.yaml")
    if source.is_file():
        doc: dict[str, Any] = yaml.safe_load(source.read_text())
        return doc
    inline = orjson.loads(path.read_bytes()).get("source")
    if isinstance(inline, dict):
        repo = str(inline.get("repository", "")).removeprefix("github.com/")
        return {"upstream": {"repo": repo, "path": inline.get("path"), "commit": inline.get("commit")}}
    assert isinstance(inline, str), f"{path.name}: no {source.name} or top-level source names its upstream"
    repo_match = re.search(r"github\.com/([\w.-]+/[\w.-]+)", inline)
    file_match = re.search(r"\(([^,()\s]+), commit ([0-9a-f]{40})", inline)
    assert repo_match and file_match, f"{path.name}: its source names no repository, file and commit"
    return {"upstream": {"repo": repo_match[1], "path": file_match[1], "commit": file_match[2]}}


def test_every_json_fixture_records_its_upstream() -> None:
    """Also the ones no backend lists (the discovery documents), and no record without its fixture."""
    for path in sorted(JSON_FIXTURES.glob("*.json")):
        _check_upstream(_json_source(path), path.name)
    for source in sorted(JSON_FIXTURES.glob("*.source.yaml")):
        assert source.with_name(source.name.removesuffix(".source.yaml") + ".json").is_file(), source.name


@pytest.mark.parametrize("backend", CASES)
def test_it_has_upstream_fixtures_with_its_objects(backend: Backend) -> None:
    assert backend.fixtures, f"{backend.name}: no fixtures"
    texts = []
    for name in backend.fixtures:
        path = ROOT / name
        assert path.is_file(), f"{backend.name}: {name} does not exist"
        texts.append(path.read_text())
        if path.suffix == ".yaml":
            _check_upstream(yaml.safe_load(texts[-1]), name)
        else:
            orjson.loads(texts[-1])
            _check_upstream(_json_source(path), name)
    watched = {_spec_key(s) for alternatives in backend.watches for s in alternatives}
    if watched:
        found = set()
        for name in backend.fixtures:
            path = ROOT / name
            if path.suffix == ".yaml":
                found |= {o["res"] for c in _cases(path) for o in c.get("objects", [])}
            else:
                found |= {
                    _spec_key(s)
                    for alternatives in backend.watches
                    for s in alternatives
                    if f'"apiVersion": "{s.api_version}"' in path.read_text()
                }
        assert found & watched, f"{backend.name}: its fixtures hold none of {sorted(watched)}"
    elif backend.foreign_api:
        # its objects come from another server (slurmrestd): each fixture is that server's API
        # document (every path under its prefix) or responses that name the document they follow
        for name, text in zip(backend.fixtures, texts, strict=True):
            doc = orjson.loads(text)
            if "paths" in doc:
                assert all(p.startswith(backend.foreign_api) for p in doc["paths"]), name
            else:
                assert "OpenAPI" in doc["source"] and all(
                    "meta" in v for k, v in doc.items() if k != "source"
                ), name
    else:
        assert backend.labels, f"{backend.name} watches no kind: it must say which labels it reads"
        assert any(label in text for label in backend.labels for text in texts), (
            f"{backend.name}: no fixture object carries {backend.labels}"
        )


@pytest.mark.parametrize("backend", CASES)
def test_every_reason_it_declares_is_produced(backend: Backend) -> None:
    if not backend.reasons:
        assert backend.name not in PREFIX or not any(
            prefix == PREFIX[backend.name] for found in PRODUCED.values() for prefix, _ in found
        )
        return
    prefix = PREFIX[backend.name]
    by_corpus = {code for found in PRODUCED.values() for p, code in found if p == prefix}
    missing = backend.reasons - by_corpus - SUPPLEMENTARY[backend.name]
    assert not missing, f"{backend.name}: declares {sorted(missing)}, which no fixture or test produces"


@pytest.mark.parametrize("backend", CASES)
def test_its_fixtures_produce_no_reason_it_does_not_declare(backend: Backend) -> None:
    prefix = PREFIX.get(backend.name)
    if prefix is None:
        return
    own = {code for name in backend.fixtures for p, code in PRODUCED.get(Path(name).name, ()) if p == prefix}
    assert own <= backend.reasons, f"{backend.name}: produces {sorted(own - backend.reasons)} undeclared"


@pytest.mark.parametrize("backend", CASES)
def test_it_names_its_action_plans_or_says_why_not(backend: Backend) -> None:
    if backend.actions is None:
        assert len(backend.read_only) > 20, f"{backend.name}: read-only without saying why"
        return
    assert backend.actions == f"hpctop.backends.{_folder(backend)}.act", "its act module lives in its folder"
    if importlib.util.find_spec(backend.actions) is not None:  # written by the actions engine's side
        importlib.import_module(backend.actions)
