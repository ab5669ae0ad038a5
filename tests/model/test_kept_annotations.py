"""``kept_annotations`` against the plain filter it replaces: same keys, order and values, for any
mix of kept and dropped keys, one kept key (``itemgetter`` of one key returns no tuple), none,
and past the caches' bound (cleared: sharing lost, never the answer)."""

from __future__ import annotations

import random

import pytest

from hpctop.model import projection
from hpctop.model.projection import KEPT_ANNOTATION_PREFIXES, kept_annotations

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
