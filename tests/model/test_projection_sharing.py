"""The projection's shared maps against the plain code they replace: ``kept_annotations`` against
the prefix filter (any mix of kept and dropped keys, one kept key: ``itemgetter`` of one key
returns no tuple, none kept) and ``shared_labels`` against a copy (same keys, order, values;
equal strings shared), also past the caches' bounds (cleared: sharing lost, never the answer)."""

from __future__ import annotations

import random

import pytest

from hpctop.model import projection
from hpctop.model.projection import KEPT_ANNOTATION_PREFIXES, kept_annotations, shared_labels

KEPT = [
    "yunikorn.apache.org/app-id",
    "batch.kubernetes.io/job-completion-index",
    "gpu-fraction",
    "hpctop.io/x",
]
DROPPED = ["prometheus.io/scrape", "kubectl.kubernetes.io/default-container", "other"]


def _plain(annotations: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in annotations.items() if k.startswith(KEPT_ANNOTATION_PREFIXES)}


def _random_annotations(rng: random.Random) -> dict[str, str]:
    keys = rng.sample(KEPT + DROPPED, rng.randrange(len(KEPT + DROPPED) + 1))
    return {k: rng.choice(["0", "1", "true", "", "a long value " * rng.randrange(4)]) for k in keys}


@pytest.mark.parametrize("bound", [projection._KEPT_BOUND, 3])
def test_kept_annotations_equal_the_plain_filter(bound: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projection, "_KEPT_BOUND", bound)
    monkeypatch.setattr(projection, "_KEPT", {})
    monkeypatch.setattr(projection, "_KEPT_KEYS", {})
    rng = random.Random(16)
    for _ in range(2000):
        annotations = _random_annotations(rng)
        got = kept_annotations(annotations)
        want = _plain(annotations)
        assert got == want
        assert list(got) == list(want)
    assert len(projection._KEPT) <= bound + 1 and len(projection._KEPT_KEYS) <= bound + 1


def test_one_kept_key_and_none_kept() -> None:
    assert kept_annotations({"prometheus.io/port": "1", "gpu-fraction": "0.5"}) == {"gpu-fraction": "0.5"}
    assert kept_annotations({"gpu-fraction": "0.25"}) == {"gpu-fraction": "0.25"}
    assert kept_annotations({"prometheus.io/port": "1"}) == {}
    assert kept_annotations({}) == {}
    assert kept_annotations(None) == {}


def test_equal_kept_annotations_share_one_dict_and_other_values_do_not() -> None:
    a = kept_annotations({"hpctop.io/user": "ann", "other": "1"})
    b = kept_annotations({"hpctop.io/user": "".join(["a", "nn"]), "other": "2"})
    c = kept_annotations({"hpctop.io/user": "bob", "other": "1"})
    assert a is b
    assert c == {"hpctop.io/user": "bob"} and c is not a


def _fresh(text: str) -> str:
    return "".join(list(text))  # an equal string that is another object


NEVER_CLEARED = projection._KEYS_BOUND


@pytest.mark.parametrize("bound", [NEVER_CLEARED, 2])
def test_shared_labels_equal_a_copy_in_order_and_share_strings(
    bound: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(projection, "_KEYS_BOUND", bound)
    monkeypatch.setattr(projection, "_LABEL_KEYS", {})
    monkeypatch.setattr(projection, "_KEY_STRINGS", {})
    rng = random.Random(14)
    keys = ["batch.kubernetes.io/job-name", "app", "hpctop.io/user", "queue", "v"]
    first: dict[str, str] = {}
    for _ in range(1000):
        chosen = rng.sample(keys, rng.randrange(len(keys) + 1))
        labels = {_fresh(k): _fresh(rng.choice(["a", "b", "long value x"])) for k in chosen}
        got = shared_labels(labels)
        assert got == labels and list(got) == list(labels)
        for k, v in got.items():
            held_k = first.setdefault(k, k)
            if bound == NEVER_CLEARED:  # every key is the one held
                assert k is held_k
            assert v is shared_labels({k: _fresh(v)})[k]
    assert len(projection._LABEL_KEYS) <= bound + 1
    assert shared_labels({}) == {} and shared_labels(None) == {}
