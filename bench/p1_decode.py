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
"""

from __future__ import annotations

from collections.abc import Callable

import orjson
from kubernetes.client import ApiClient

from bench.common import Verdict, gc_mode, interleaved
from bench.payloads import pod_list
from hpctop.model.decode import decode_list


def run(pods: int, repeats: int) -> Verdict:
    raw = pod_list(pods)
    text = raw.decode()
    api = ApiClient()
    decoded = decode_list("Pod", raw)

    def official() -> object:
        return api.deserialize(text, "V1PodList", "application/json")

    assert len(decoded.objects) == pods and not decoded.skipped
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
