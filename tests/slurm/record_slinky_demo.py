"""Record the offline Slinky demo (``hpctop --demo-slinky``): ``python -m tests.slurm.record_slinky_demo``.

Why a recorder: the demo must show the joined view with no Slurm and no cluster at hand, and
what it shows must be what a real slurmrestd answered, not hand-written JSON. This starts the
real Slurm of :mod:`tests.slurm.realslurm` (Debian's packages), submits a few ``sleep`` jobs
(accounts, GPUs, one held, two waiting), reads ``/openapi/v3``, ``jobs``, ``nodes`` and
``partitions`` as slurmrestd sends them, and writes them to ``hpctop/runtime/slinky_demo.json``
beside the Kubernetes side: the objects of ``tests/fixtures/slinky/cluster.yaml`` (sources
recorded there), the slurm-bridge pod labelled with the id Slurm gave its stand-in job.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.slurm.realslurm import RealSlurm, missing
from tests.slurm.slinky import slinky_objects

OUT = Path(__file__).parents[2] / "hpctop" / "runtime" / "slinky_demo.json"


def _get(cluster: RealSlurm, path: str, token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        cluster.url + path, headers={"X-SLURM-USER-NAME": "root", "X-SLURM-USER-TOKEN": token}
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        answer: dict[str, Any] = json.loads(resp.read())
    return answer


def record() -> dict[str, Any]:
    why = missing()
    if why is not None:
        raise SystemExit(why)
    root = Path(tempfile.mkdtemp(prefix="hpctop-slinky-demo-"))
    cluster = RealSlurm(root)
    try:
        cluster.start()
        cluster.sbatch("-A", "physics", "-w", "sn1", "--gres=gpu:2", "-J", "lattice-qcd")
        cluster.sbatch("-A", "chem", "-w", "sn2", "--gres=gpu:1", "-J", "dft-relax")
        bridged = cluster.sbatch("-A", "bio", "-w", "sn3", "--gres=gpu:1", "-J", "bridge-train")
        cluster.sbatch("-A", "physics", "--gres=gpu:2", "-J", "lattice-qcd-2")
        cluster.sbatch("-A", "chem", "--gres=gpu:2", "-J", "md-long")
        cluster.sbatch("-A", "bio", "--hold", "-J", "fold-sweep")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            reasons = cluster.run(["squeue", "-h", "-t", "PD", "-o", "%r"]).stdout.split()
            if reasons and all(r != "None" for r in reasons):
                break
            time.sleep(0.5)
        token = cluster.token()
        openapi = _get(cluster, "/openapi/v3", token)
        version = "v0.0.38"
        paths = sorted(p for p in openapi.get("paths", {}) if p.startswith(f"/slurm/{version}/"))
        responses = {
            path: _get(cluster, path, token)
            for path in (f"/slurm/{version}/jobs", f"/slurm/{version}/nodes", f"/slurm/{version}/partitions")
        }
        taken_at = time.time()
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    kubernetes = [{"kind": res.kind, "object": obj} for res, obj in slinky_objects(bridged)]
    return {
        "source": (
            "recorded by tests/slurm/record_slinky_demo.py: slurmrestd of Debian's Slurm 22.05 "
            "(tests/slurm/realslurm.py) and the Slinky-shaped objects of tests/fixtures/slinky/cluster.yaml"
        ),
        "taken_at": taken_at,
        "slurmrestd": {"openapi_paths": paths, "responses": responses},
        "kubernetes": kubernetes,
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(OUT)
