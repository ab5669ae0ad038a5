"""A reason's amounts carry their unit once: "186 GPUs", never "186 GPUs gpu".

The quota reason appended the resource's key after an amount that already names its unit
(``_amount`` gives "186 GPUs", "8 CPUs", "16 GiB"): the console read "of max 186 GPUs gpu".
"""

from __future__ import annotations

from hpctop.scheduling import explain


def test_quota_reason_names_each_unit_once() -> None:
    gpu = explain.quota("root.nlp", "gpu", used=180_000, cap=186_000, need=8000).message
    assert gpu == "queue root.nlp uses 180 GPUs of max 186 GPUs, job needs 8 GPUs"
    cpu = explain.quota("root.nlp", "cpu", used=60_000, cap=64_000, need=8000).message
    assert "of max 64 CPUs," in cpu and "CPUs cpu" not in cpu
    other = explain.quota("root.nlp", "example.com/fpga", used=3, cap=4, need=2).message
    assert "of max 4 example.com/fpga," in other
    assert other.count("example.com/fpga") == 3, "one per amount: used, max, need"
