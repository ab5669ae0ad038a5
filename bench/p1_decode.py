"""P1 decode: pod list bytes → model objects, against the official client and plain orjson.

Three sides on the same bytes, interleaved: hpctop's ``decode_list`` (msgspec Structs of the
fields hpctop reads, projected into frozen objects), the official ``kubernetes`` client
deserialising a V1PodList, and ``orjson.loads`` into plain dicts (the floor of any JSON decoder
in Python).
"""

from __future__ import annotations

import orjson
from kubernetes.client import ApiClient

from bench.common import Verdict, interleaved
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
        },
        repeats,
    )
    vs_official = medians["official"] / medians["hpctop"]
    vs_orjson = medians["orjson"] / medians["hpctop"]
    rate = pods / medians["hpctop"]
    return Verdict(
        "P1 decode",
        f"{vs_official:.1f}x official client, {vs_orjson:.2f}x orjson ({rate:,.0f} pods/s, {pods:,} pods)",
        vs_official >= 30 and vs_orjson >= 0.5,
        "goal >= 30x official and >= 0.5x orjson",
    )
