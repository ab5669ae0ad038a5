"""P4's and P8's reference checks agree on matching outputs and fail on a changed one (issue 16's
done-when: every ratio's reference is asserted to give the same result)."""

from __future__ import annotations

import orjson
import pytest

from bench import p2_memory, p4_cold, p8_peer


def _outputs(jobs: list[tuple[str, str]], pods: list[tuple[str, str, str]]) -> dict[str, bytes]:
    items = [
        {"metadata": {"namespace": ns, "name": pod, "ownerReferences": [{"kind": "Job", "name": job}]}}
        for ns, job, pod in pods
    ]
    table = "NAMESPACE NAME\n" + "".join(f"{ns} {pod}\n" for ns, _, pod in pods)
    return {
        "hpctop json": orjson.dumps([{"namespace": ns, "name": name} for ns, name in jobs]),
        "kubectl json": orjson.dumps({"items": items}),
        "hpctop table": b"HEAD\n" + b"row\n" * len(jobs),
        "kubectl table": table.encode(),
    }


PODS = [("a", "j1", "j1-w-0"), ("b", "j2", "j2-w-0")]


def test_p8_same_names_pass_and_a_renamed_job_fails() -> None:
    p8_peer._check_outputs(_outputs([("a", "j1"), ("b", "j2")], PODS), 2)
    with pytest.raises(RuntimeError, match="differ"):
        p8_peer._check_outputs(_outputs([("a", "j1"), ("b", "other")], PODS), 2)


def test_p4_counts_fail_on_a_missing_item() -> None:
    p4_cold.check_reference(12, 10, 2)
    p4_cold.check_console(10, 10, 2, 10, 2)
    with pytest.raises(RuntimeError):
        p4_cold.check_reference(11, 10, 2)
    with pytest.raises(RuntimeError):
        p4_cold.check_console(10, 9, 2, 10, 2)
    with pytest.raises(RuntimeError):
        p4_cold.check_console(10, 10, 1, 10, 2)


def test_p2_store_check_fails_on_a_missing_pod_node_job_or_a_skip() -> None:
    pods = [
        {
            "metadata": {
                "namespace": "a",
                "name": f"j-{i}",
                "ownerReferences": [{"kind": "Job", "name": "j", "controller": True}],
            }
        }
        for i in range(3)
    ]
    fed_pods, fed_jobs = p2_memory.loaded_keys(pods)
    assert fed_jobs == {("a", "Job", "j")}
    nodes = {"n1", "n2"}
    p2_memory.check_store(fed_pods, nodes, fed_jobs, 0, fed_pods, nodes, fed_jobs)
    one_less = set(sorted(fed_pods)[1:])
    for held in (
        (one_less, nodes, fed_jobs, 0),
        (one_less | {("a", "other")}, nodes, fed_jobs, 0),
        (fed_pods, {"n1"}, fed_jobs, 0),
        (fed_pods, nodes, {("a", "Job", "k")}, 0),
        (fed_pods, nodes, fed_jobs, 1),
    ):
        with pytest.raises(RuntimeError, match="not what it was fed"):
            p2_memory.check_store(*held, fed_pods, nodes, fed_jobs)


def test_p2_counts_the_store_it_measures() -> None:
    verdict = p2_memory.run(40, 4)
    assert "40 pods, 4 nodes and" in verdict.detail
