"""P1 decode: pod list bytes → model objects, against the official client and plain orjson.

Three sides on the same bytes, interleaved: hpctop's ``decode_list`` (msgspec Structs of the
fields hpctop reads, projected into frozen objects), the official ``kubernetes`` client
deserialising a V1PodList, and ``orjson.loads`` into plain dicts (the floor of any JSON decoder
in Python).

Like for like: hpctop's decode turns the cyclic GC off while it builds a list (a design choice
of the decoder), so the verdict's orjson side runs with the GC off too (``orjson GC off``). The
orjson side with the GC as is is printed beside it, for comparison with earlier figures (2.44x
there was hpctop with the GC off against orjson with it on: not the same conditions).
"""

from __future__ import annotations

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
    assert len(decoded.objects) == pods and not decoded.skipped
    medians = interleaved(
        {
            "hpctop": lambda: decode_list("Pod", raw),
            "official": lambda: api.deserialize(text, "V1PodList", "application/json"),
            "orjson": lambda: orjson.loads(raw),
            "orjson GC off": lambda: _loads_gc_off(raw),
        },
        repeats,
    )
    vs_official = medians["official"] / medians["hpctop"]
    vs_orjson = medians["orjson GC off"] / medians["hpctop"]
    vs_orjson_gc_on = medians["orjson"] / medians["hpctop"]
    rate = pods / medians["hpctop"]
    return Verdict(
        "P1 decode",
        f"{vs_official:.1f}x official client, {vs_orjson:.2f}x orjson with the GC off like hpctop "
        f"({vs_orjson_gc_on:.2f}x orjson with the GC on; {rate:,.0f} pods/s, {pods:,} pods)",
        vs_official >= 30 and vs_orjson >= 0.5,
        "goal >= 30x official and >= 0.5x orjson",
    )


def _loads_gc_off(raw: bytes) -> object:
    """``orjson.loads`` with the cyclic GC off, as hpctop's decode runs."""
    with gc_mode("off"):
        return orjson.loads(raw)
