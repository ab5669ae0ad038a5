"""What ``sshare`` and ``sacctmgr show qos`` print, read for comparison with hpctop's rows.

Why a module: the real-Slurm tests (``test_accounting_real.py``) and the tests on a recorded
22.05 answer (``test_accounting_recorded.py``, no Slurm needed) hold hpctop to the same reading of
the same commands' output, so each comparison is written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SSHARE_FIELDS = "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"
SSHARE = ("sshare", "-a", "-n", "-P", "-o", SSHARE_FIELDS)
QOS_FORMAT = "name,priority,preempt,flags,usagefactor,grptres,maxtrespu,maxjobspu,maxsubmitpu,maxwall"
SACCTMGR_QOS = ("sacctmgr", "-n", "-P", "show", "qos", f"format={QOS_FORMAT}")


def sshare_rows(out: str) -> list[list[str]]:
    """``sshare -a -n -P -o SSHARE_FIELDS``'s lines as fields (accounts keep their indentation)."""
    return [line.split("|") for line in out.splitlines() if line.strip()]


def assert_shares_read_like_sshare(rows: Sequence[dict[str, Any]], sshare: Sequence[list[str]]) -> None:
    """hpctop's share rows from a v0.0.38 slurmrestd are sshare's tree, raw and normalised shares;
    what slurmdbd's associations cannot give (usage, fair share) is empty, never invented."""
    assert len(rows) == len(sshare), (rows, sshare)
    for row, (account, user, raw, norm, _, _, _) in zip(rows, sshare, strict=True):
        assert row["depth"] == len(account) - len(account.lstrip(" ")), (row, account)
        assert (row["account"], row["user"] or "") == (account.strip(), user)
        assert row["raw_shares"] == (int(raw) if raw.isdigit() else None), (row, raw)
        assert (row["raw_shares"] is None) == (raw in ("", "parent"))
        assert f"{row['norm_shares']:.6f}" == norm, (row, norm)
        assert (row["raw_usage"], row["effective_usage"], row["fairshare"]) == (None, None, None)
        assert row["source"] == "associations"


def clock_seconds(clock: str) -> int | None:
    """sacctmgr's ``[D-]HH:MM:SS`` as seconds (None for empty)."""
    if not clock:
        return None
    days, _, rest = clock.rpartition("-")
    hours, minutes, seconds = (int(p) for p in rest.split(":"))
    return int(days or 0) * 86400 + hours * 3600 + minutes * 60 + seconds


def sacctmgr_qos(out: str) -> list[tuple[Any, ...]]:
    """``sacctmgr -n -P show qos format=QOS_FORMAT`` as typed values, in sacctmgr's order."""
    found = []
    for line in out.splitlines():
        name, priority, preempt, flags, factor, grp_tres, tres_pu, jobs_pu, submit_pu, wall = line.split("|")
        found.append(
            (
                name,
                int(priority),
                preempt,
                flags,
                float(factor),
                grp_tres or None,
                tres_pu or None,
                int(jobs_pu) if jobs_pu else None,
                int(submit_pu) if submit_pu else None,
                clock_seconds(wall),
            )
        )
    return found


def qos_values(rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """hpctop's QOS rows (``queues --qos -o json``) as the values :func:`sacctmgr_qos` reads."""
    return [
        (
            r["name"],
            r["priority"],
            ",".join(r["preempt"]),
            ",".join(r["flags"]),
            r["usage_factor"],
            r["grp_tres"],
            r["max_tres_per_user"],
            r["max_jobs_per_user"],
            r["max_submit_per_user"],
            r["max_wall"],
        )
        for r in rows
    ]
