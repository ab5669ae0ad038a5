"""Every kind the console lists decodes through the fast path on upstream-shaped objects (issue 16).

Why: the fast path is one strict msgspec decode of a whole list page, in C; whatever it refuses is
cut into items and read field by field (:mod:`hpctop.model.tolerant`), several times slower. A
kind whose real objects the strict Structs refuse (a field typed narrower than what the upstream
API serves) costs a big cluster its cold start without any visible fault (batch Jobs once went
through pydantic, outside the fast path, on every list). So each object of the upstream-shaped corpora
(``tests/fixtures/live_truth``, ``tests/fixtures/gangs_2026``: upstream repository, file and
commit recorded in each file), served as an API server lists it (no kind/apiVersion,
``managedFields``), must be taken by its kind's strict page decoder; and every kind a live
session may list (each backend's watched resources) must have such an object here.
"""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import orjson
import pytest

from bench.payloads import gpu_pod, node_event, served_pod
from hpctop.backends import registry
from hpctop.backends.contract import ResourceSpec
from hpctop.backends.kueue.wire import COHORT
from hpctop.model.decode import decode_list, decoders_of
from tests.backends.test_live_truth import CASES, _load, _served
from tests.kube.fakeserver import Res

GANGS = sorted((Path(__file__).parents[1] / "fixtures" / "gangs_2026").glob("*.yaml"))
#: every resource a live session may list: the core and each backend's alternatives
SPECS: dict[tuple[str, str, str], ResourceSpec] = {
    (s.plural, s.group, s.version): s
    for b in registry.BACKENDS
    for alternatives in b.watches
    for s in alternatives
}


def _listed() -> dict[str, list[bytes]]:
    """Decoder kind → the corpus objects of that kind as list items (bytes), each as served."""
    out: dict[str, list[bytes]] = {}
    for case in [*CASES, *_load(GANGS)]:
        for res, obj in case.objects:
            spec = SPECS.get((res.plural, res.group, res.version))
            if spec is None:
                continue  # served by the fake for another reason (not listed by a session)
            item = _served(res, obj)
            item.pop("kind", None)
            item.pop("apiVersion", None)
            out.setdefault(spec.kind, []).append(orjson.dumps(item))
    return out


#: Kueue's Cohorts as its concept page writes them (kubernetes-sigs/kueue, commit
#: 01486f000669bcdcd602899da7f94337e91bb710, site/content/en/docs/concepts/cohort.md): the simplest
#: one, one with a shared quota (``nominalQuota: 12``: an int, which a CRD's int-or-string keeps as
#: it was written), and a tree whose children name a parent and a fair-sharing weight. No case of the
#: corpora above has a Cohort (the one kind a session lists that they left unchecked).
UPSTREAM_COHORTS: list[dict[str, object]] = [
    {"metadata": {"name": "hello-cohort"}},
    {
        "metadata": {"name": "hello-cohort"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": 12}]}
                    ],
                }
            ]
        },
    },
    {"metadata": {"name": "root-cohort"}},
    {
        "metadata": {"name": "important-org"},
        "spec": {"parent": "root-cohort", "fairSharing": {"weight": "0.75"}},
    },
    {
        "metadata": {"name": "regular-org"},
        "spec": {"parent": "root-cohort", "fairSharing": {"weight": "0.25"}},
    },
]


def _served_cohorts() -> list[bytes]:
    """The upstream Cohorts as a v1alpha1 API server lists them (``_served``: managedFields added)."""
    res = Res("Cohort", "kueue.x-k8s.io", "v1alpha1", "cohorts", namespaced=False)
    return [orjson.dumps(_served(res, cohort)) for cohort in UPSTREAM_COHORTS]


LISTED = _listed()
LISTED.setdefault(COHORT, []).extend(_served_cohorts())


def test_the_upstream_cohorts_decode_whole_through_the_fast_path() -> None:
    page = b'{"metadata":{"resourceVersion":"7"},"items":[' + b",".join(_served_cohorts()) + b"]}"
    assert len(decoders_of(COHORT).page.decode(page).items) == len(UPSTREAM_COHORTS)
    decoded = decode_list(COHORT, page, "kueue.x-k8s.io/v1alpha1")
    assert not decoded.skipped
    assert [(c.name, c.parent, c.weight) for c in decoded.objects] == [
        ("hello-cohort", None, None),
        ("hello-cohort", None, None),
        ("root-cohort", None, None),
        ("important-org", "root-cohort", pytest.approx(0.75)),
        ("regular-org", "root-cohort", pytest.approx(0.25)),
    ]
    assert decoded.objects[1].quotas


def test_every_listed_object_is_taken_by_the_strict_page_decoder() -> None:
    refused = []
    for kind, items in LISTED.items():
        page = b'{"metadata":{"resourceVersion":"7"},"items":[' + b",".join(items) + b"]}"
        try:
            decoders_of(kind).page.decode(page)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:  # what sends a page to the slow path
            refused.append(f"{kind}: {exc}")
        decoded = decode_list(kind, page)
        assert len(decoded.objects) + len(decoded.skipped) == len(items)
    assert not refused, "kinds whose upstream objects take the slow path:\n" + "\n".join(refused)


def test_the_benchmarks_pods_and_nodes_are_taken_by_the_strict_page_decoder() -> None:
    """P1, P4 and P8 time the fast path: their payloads must not fall back to the slow one."""
    rng = random.Random(1)
    pods = [orjson.dumps(gpu_pod(0, rng)), orjson.dumps(served_pod(1, rng))]
    nodes = [orjson.dumps(orjson.loads(node_event(0))["object"])]
    for kind, items in (("Pod", pods), ("Node", nodes)):
        page = decoders_of(kind).page.decode(b'{"items":[' + b",".join(items) + b"]}")
        assert len(page.items) == len(items)


#: kinds a session may list with no upstream-shaped object here, by name: the fast path of these is
#: not checked (none since session 17: Kueue's Cohort from its concept page, ``UPSTREAM_COHORTS``)
UNCHECKED: set[str] = set()


def test_every_kind_a_session_lists_has_upstream_objects_here() -> None:
    """Each listed kind's strict Struct met corpus objects: its own, or those of a kind decoded by
    the very same Struct (Kubeflow's JAXJob, PaddleJob and XGBoostJob share PyTorchJob's)."""
    struct_of = {kind: decoders_of(kind).struct for kind in {s.kind for s in SPECS.values()}}
    checked = {struct_of[kind] for kind in LISTED if kind in struct_of}
    unchecked = {kind for kind, struct in struct_of.items() if struct not in checked}
    assert unchecked == UNCHECKED, f"kinds whose fast path no corpus object checks: {sorted(unchecked)}"
