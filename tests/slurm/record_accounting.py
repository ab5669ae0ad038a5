"""Record what a real Slurm 22.05 with accounting answers, for the tests that run without Slurm.

Run as root where Debian's Slurm, slurmdbd and MariaDB are installed::

    python -m tests.slurm.record_accounting

It starts the accounting cluster of :mod:`tests.slurm.realslurm`, runs a short job under each
account (so sshare has usage), and writes ``fixtures/accounting-v0.0.38.json``: slurmrestd's
``/slurmdb/v0.0.38/qos`` and ``/associations`` answers, the paths its OpenAPI document lists,
and ``sshare``'s and ``sacctmgr show qos``'s output read at the same moment.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.slurm.accounting import SACCTMGR_QOS, SSHARE
from tests.slurm.realslurm import RealSlurm, missing

OUT = Path(__file__).parent / "fixtures" / "accounting-v0.0.38.json"


def _get(cluster: RealSlurm, path: str) -> Any:
    request = urllib.request.Request(
        cluster.url + path, headers={"X-SLURM-USER-NAME": "root", "X-SLURM-USER-TOKEN": cluster.token()}
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


def main() -> int:
    why = missing(accounting=True)
    if why is not None:
        print(why, file=sys.stderr)
        return 1
    root = Path(tempfile.mkdtemp(prefix="hpctop-record-acct-"))
    cluster = RealSlurm(root, accounting=True)
    try:
        cluster.start()
        for account in ("physics", "chemistry", "bio", "theory"):
            cluster.sbatch("-A", account, "-n", "2", command="sleep 1")
        deadline = time.monotonic() + 30
        while cluster.run(["squeue", "-h"]).stdout.strip() and time.monotonic() < deadline:
            time.sleep(0.5)
        version = cluster.run(["sinfo", "-V"]).stdout.strip()
        record = {
            "source": (
                f"Recorded from a real {version} (Debian 12's packages: slurmctld, slurmd, slurmdbd, "
                "slurmrestd with openapi/v0.0.38 and openapi/dbv0.0.38, MariaDB) started by "
                "tests/slurm/realslurm.py with accounting=True (the accounts and QOS of its ACCOUNTING), "
                "a 'sleep 1' job run under each account; by python -m tests.slurm.record_accounting"
            ),
            "paths": {
                path: sorted(ops) for path, ops in sorted(_get(cluster, "/openapi/v3")["paths"].items())
            },
            "qos": _get(cluster, "/slurmdb/v0.0.38/qos"),
            "associations": _get(cluster, "/slurmdb/v0.0.38/associations"),
            "sshare": cluster.run(list(SSHARE)).stdout,
            "sacctmgr_qos": cluster.run(list(SACCTMGR_QOS)).stdout,
        }
        OUT.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {OUT}")
        return 0
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
