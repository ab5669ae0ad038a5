"""P1 decode: pod list bytes → model objects, against the official client and plain orjson.

Three sides on the same bytes, interleaved: hpctop's ``decode_list`` (msgspec Structs of the
fields hpctop reads, projected into frozen objects), the official ``kubernetes`` client
deserialising a V1PodList, and ``orjson.loads`` into plain dicts (the floor of any JSON decoder
in Python).

Like for like: hpctop's decode turns the cyclic GC off while it builds a list (a design choice
of the decoder), so both references of the verdict run with the GC off too (``orjson GC off``,
``official GC off``). Each reference with the GC as is is printed beside it, for comparison with
earlier figures (2.44x there was hpctop with the GC off against orjson with it on; the official
client's 30x was against it with the GC on, also not the same conditions: issue 16's review).

Same result: before the timing, each side's output is reduced to the facts hpctop's projection
keeps of a pod that the other two also hold (namespace, name, phase, node name, requests of cpu,
memory and GPUs) and the three are asserted equal, pod by pod. The references' requests are
summed from their own containers with the official client's ``parse_quantity`` (not hpctop's
parser), as Kubernetes defines a pod's request: the sum over containers, at least the largest
init container, plus the pod overhead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any

import orjson
from kubernetes.client import ApiClient
from kubernetes.utils import parse_quantity

from bench.common import Verdict, gc_mode, interleaved
from bench.payloads import pod_list
from hpctop.model.decode import decode_list
from hpctop.model.objects import Pod

#: one pod as every side reports it: namespace, name, phase, node, (cpu cores, memory bytes, GPUs)
PodFacts = tuple[str, str, str, str | None, tuple[Decimal, Decimal, Decimal]]

GPU = "nvidia.com/gpu"


def run(pods: int, repeats: int) -> Verdict:
    raw = pod_list(pods)
    text = raw.decode()
    api = ApiClient()
    decoded = decode_list("Pod", raw)

    def official() -> object:
        return api.deserialize(text, "V1PodList", "application/json")

    assert len(decoded.objects) == pods and not decoded.skipped
    ours = hpctop_facts(decoded.objects)
    assert official_facts(official()) == ours, "the official client holds other pods than hpctop"
    assert dict_facts(orjson.loads(raw)) == ours, "orjson's dicts hold other pods than hpctop"
    medians = interleaved(
        {
            "hpctop": lambda: decode_list("Pod", raw),
            "official": lambda: official(),
            "official GC off": lambda: _gc_off(official),
            "orjson": lambda: orjson.loads(raw),
            "orjson GC off": lambda: _gc_off(lambda: orjson.loads(raw)),
        },
        repeats,
    )
    hpctop = medians["hpctop"]
    vs_official = medians["official GC off"] / hpctop
    vs_orjson = medians["orjson GC off"] / hpctop
    rate = pods / hpctop
    return Verdict(
        "P1 decode",
        f"{vs_official:.1f}x official client, {vs_orjson:.2f}x orjson, each with the GC off like hpctop",
        vs_official >= 30 and vs_orjson >= 0.5,
        f"{pods:,} pods, {rate:,.0f} pods/s, medians of {repeats} interleaved: hpctop {hpctop:.3f} s,"
        f" official {medians['official GC off']:.3f} s GC off ({medians['official']:.3f} s GC on:"
        f" {medians['official'] / hpctop:.1f}x), orjson {medians['orjson GC off']:.3f} s GC off"
        f" ({medians['orjson']:.3f} s GC on: {medians['orjson'] / hpctop:.2f}x);"
        " goal >= 30x official and >= 0.5x orjson",
    )


def _gc_off(fn: Callable[[], object]) -> object:
    """``fn()`` with the cyclic GC off, as hpctop's decode runs."""
    with gc_mode("off"):
        return fn()


def hpctop_facts(objects: Iterable[object]) -> list[PodFacts]:
    """The compared facts of hpctop's decoded pods (milli-units back to whole units)."""
    facts: list[PodFacts] = []
    for pod in objects:
        assert isinstance(pod, Pod)
        r = pod.requests
        amounts = (Decimal(r.cpu) / 1000, Decimal(r.memory), Decimal(r.gpu) / 1000)
        facts.append((pod.namespace, pod.name, pod.phase, pod.node_name, amounts))
    return facts


def official_facts(pod_list: Any) -> list[PodFacts]:
    """The compared facts of the official client's ``V1PodList``."""
    facts: list[PodFacts] = []
    for pod in pod_list.items:
        spec = pod.spec
        containers = [c.resources.requests if c.resources else None for c in spec.containers]
        inits = [c.resources.requests if c.resources else None for c in spec.init_containers or ()]
        amounts = _pod_requests(containers, inits, spec.overhead)
        meta = pod.metadata
        facts.append((meta.namespace, meta.name, pod.status.phase, spec.node_name, amounts))
    return facts


def dict_facts(page: Any) -> list[PodFacts]:
    """The compared facts of ``orjson.loads``' plain dicts."""
    facts: list[PodFacts] = []
    for pod in page["items"]:
        spec = pod["spec"]
        containers = [c.get("resources", {}).get("requests") for c in spec["containers"]]
        inits = [c.get("resources", {}).get("requests") for c in spec.get("initContainers", ())]
        amounts = _pod_requests(containers, inits, spec.get("overhead"))
        meta = pod["metadata"]
        facts.append((meta["namespace"], meta["name"], pod["status"]["phase"], spec.get("nodeName"), amounts))
    return facts


def _pod_requests(
    containers: Iterable[Mapping[str, str] | None],
    inits: Iterable[Mapping[str, str] | None],
    overhead: Mapping[str, str] | None,
) -> tuple[Decimal, Decimal, Decimal]:
    """A pod's request of cpu, memory and GPUs: sum of containers, max with each init, plus overhead."""

    def amounts(requests: Mapping[str, str] | None) -> tuple[Decimal, Decimal, Decimal]:
        got = requests or {}
        cpu, memory, gpus = (_quantity(got[k]) if k in got else Decimal(0) for k in ("cpu", "memory", GPU))
        return cpu, memory, gpus

    total = [Decimal(0)] * 3
    for requests in containers:
        total = [a + b for a, b in zip(total, amounts(requests), strict=True)]
    for requests in inits:
        total = [max(a, b) for a, b in zip(total, amounts(requests), strict=True)]
    extra = amounts(overhead)
    cpu, memory, gpus = (a + b for a, b in zip(total, extra, strict=True))
    return cpu, memory, gpus


def _quantity(text: str) -> Decimal:
    """The official client's own quantity parser (``kubernetes.utils``, untyped)."""
    return Decimal(parse_quantity(text))  # type: ignore[no-untyped-call]
