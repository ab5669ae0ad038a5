"""Scenario files: the documented format loads into specs and a policy; mistakes get clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpctop.errors import ScenarioError
from hpctop.model.policy import PartitionState, QueueState
from hpctop.sources.scenario import load_scenario, parse_scenario

EXAMPLE = """\
[[nodes]]                      # a node group
name = "dgx"                   # nodes are named dgx-0, dgx-1, ...
count = 4
gpus = 8
gpu_model = "H100"             # becomes the nvidia.com/gpu.product label
cpu = "64"
memory = "512Gi"
labels = { "topology/clique" = "a" }

[[partitions]]
name = "h100"
selector = { "nvidia.com/gpu.product" = "H100" }
priority_tier = 1

[[queues]]
path = "root.research"
guaranteed = { gpu = 16 }     # resource names: gpu, cpu, memory
max = { gpu = 32 }

[priority]                     # optional; defaults otherwise
weight_age = 1000
max_age = 604800

[[jobs]]
name = "train-a"
queue = "root.research"
partition = "h100"             # optional
submit = 0                     # seconds on the virtual clock
duration = 3600
members = 4                    # gang size; min_members defaults to members
per_member = { gpu = 8, cpu = "32", memory = "256Gi" }
priority = 100                 # priority-class value (optional)
held = false
"""


def test_the_documented_example_loads() -> None:
    sc = parse_scenario(EXAMPLE, name="example")
    assert [n.name for n in sc.nodes] == ["dgx-0", "dgx-1", "dgx-2", "dgx-3"]
    node = sc.nodes[0]
    assert node.gpus == 8 and node.gpu_model == "H100" and node.cpu == 64000 and node.memory == 512 * 1024**3
    assert dict(node.labels) == {"topology/clique": "a"}
    (part,) = sc.policy.partitions
    assert part.name == "h100" and part.selector == (("nvidia.com/gpu.product", "H100"),)
    assert part.state == PartitionState.UP
    queues = {q.path: q for q in sc.policy.queues}
    assert set(queues) == {"root", "root.research"}  # ancestors are added
    assert queues["root.research"].guaranteed.gpu == 16000
    assert queues["root.research"].max is not None and queues["root.research"].max.gpu == 32000
    assert queues["root.research"].state == QueueState.OPEN
    assert sc.policy.weights.age == 1000 and sc.policy.weights.max_age == 604800
    assert sc.policy.weights.fairshare == 10000  # default kept
    (job,) = sc.jobs
    assert job.members == 4 and job.min_members == 4 and job.queue == "root.research"
    assert (
        job.per_member.gpu == 8000 and job.per_member.cpu == 32000 and job.per_member.memory == 256 * 1024**3
    )
    assert job.priority == 100 and job.time_limit == 3600 and job.partition == "h100" and not job.held


def test_fractions_and_extras() -> None:
    sc = parse_scenario(
        EXAMPLE
        + """
[[jobs]]
name = "frac"
duration = 60
per_member = { gpu = 0.25, cpu = "500m", memory = 1073741824 }
gpu_models = ["H100", "A100"]
min_members = 1
user = "ana"
fail = true

[[jobs]]
name = "milli"
duration = 60
gpu_milli = 220
kind = "batch"

[[jobs]]
name = "svc"
kind = "service"
members = 3
per_member = { gpu = 1 }
"""
    )
    jobs = {j.name: j for j in sc.jobs}
    assert jobs["frac"].gpu_milli == 250 and jobs["frac"].gpu_count == 1 and jobs["frac"].cpu == 500
    assert jobs["frac"].memory == 1024**3 and jobs["frac"].fail and jobs["frac"].user == "ana"
    assert jobs["frac"].gpu_models == ("H100", "A100")
    assert jobs["milli"].per_member.gpu == 220
    assert jobs["svc"].kind == "service" and jobs["svc"].duration is None and jobs["svc"].min_members == 1


def test_bad_quantity_names_line_field_and_job() -> None:
    text = EXAMPLE.replace('memory = "256Gi"', 'memory = "256GB"')
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="s.toml")
    detail = info.value.detail
    line = next(i for i, t in enumerate(text.splitlines(), 1) if '"256GB"' in t)
    assert f"s.toml:{line}:" in detail
    assert "jobs[0].per_member.memory" in detail and "'train-a'" in detail
    assert "not a Kubernetes quantity" in detail


def test_missing_field_is_named() -> None:
    text = EXAMPLE.replace('cpu = "64"\n', "")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="s.toml")
    assert "nodes[0].cpu" in info.value.detail and "required field is missing" in info.value.detail
    assert "s.toml:1:" in info.value.detail  # the [[nodes]] table that lacks it


def test_unknown_partition_names_the_job() -> None:
    text = EXAMPLE.replace('partition = "h100"', 'partition = "a100"')
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="s.toml")
    detail = info.value.detail
    line = next(i for i, t in enumerate(text.splitlines(), 1) if 'partition = "a100"' in t)
    assert f"s.toml:{line}:" in detail
    assert "job 'train-a'" in detail and "unknown partition 'a100'" in detail and "h100" in detail


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'queue = "root.research"\npartition',
            'queue = "root.other"\npartition',
            "unknown queue 'root.other'",
        ),
        ("members = 4 ", "members = 4\nmin_members = 5 ", "min_members (5) is larger than members (4)"),
        ("gpu = 8,", "gpu = 1.5,", "only whole GPUs"),
        ("duration = 3600\n", "", "duration is required for batch jobs"),
        ("held = false", "held = false\ncolour = 1", "unknown field"),
        ('name = "train-a"', 'name = "Train_A"', "jobs[0].name"),
        ("count = 4", "count = 0", "nodes[0].count"),
    ],
)
def test_other_mistakes(old: str, new: str, message: str) -> None:
    assert old in EXAMPLE
    with pytest.raises(ScenarioError, match="invalid scenario") as info:
        parse_scenario(EXAMPLE.replace(old, new, 1))
    assert message in info.value.detail


def test_duplicate_job_and_bad_toml() -> None:
    dup = EXAMPLE + EXAMPLE[EXAMPLE.index("[[jobs]]") :]
    with pytest.raises(ScenarioError, match="another job is named default/train-a"):
        parse_scenario(dup)
    with pytest.raises(ScenarioError, match="not valid TOML"):
        parse_scenario("[[nodes]\nname=")


def test_load_from_file(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_text(EXAMPLE, encoding="utf-8")
    sc = load_scenario(path)
    assert sc.name == "lab" and len(sc.nodes) == 4
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "missing.toml")
