"""What the Slurm note says when the real Slurm 22.05 refuses the token: not a generic "failed".

Seen on this harness (Debian's 22.05, ``rest_auth/jwt``): slurmrestd passes the token to
slurmctld, which logs "auth_p_verify: initial jwt_decode failure" / "REQUEST_JOB_INFO has
authentication error" and refuses it; slurmrestd answers HTTP 500, ``{"error": "Unspecified
error", "error_number": -1}``, for a token signed with another key, an expired one and one
naming another user alike, the same answer it gives when slurmctld is down (after some 9 s of
retries). The note says which it can: the token's own claims show an expired token or another
user's; a token of another key reads "refused the token or cannot reach slurmctld".
"""

from __future__ import annotations

import os

from hpctop.sources.kube.backoff import Backoff
from hpctop.sources.slurm.poll import SlurmPoller
from hpctop.sources.slurm.rest import SlurmRest
from tests.slurm.realslurm import RealSlurm, make_jwt


def _note(cluster: RealSlurm, token: str, user: str = "root") -> tuple[str, float]:
    clock = [0.0]
    poller = SlurmPoller(
        SlurmRest(cluster.url, user=user, token=token),
        clock=lambda: clock[0],
        backoff=Backoff(clock=lambda: clock[0], rng=lambda: 0.0),
    )
    view = poller.poll()
    assert view.stale and view.jobs == ()
    return view.note, poller.next_at - clock[0]


def test_a_token_of_another_key_is_said_to_be_refused_or_slurmctld_unreachable(slurm: RealSlurm) -> None:
    note, wait = _note(slurm, make_jwt(os.urandom(32), "root"))
    assert "slurmrestd refused the token or cannot reach slurmctld" in note
    assert "500" in note and "Unspecified error" in note
    assert "failed (" not in note
    assert wait < 30  # it may be slurmctld coming back: the ordinary backoff


def test_an_expired_token_is_said_to_be_refused(slurm: RealSlurm) -> None:
    note, wait = _note(slurm, make_jwt(slurm.jwt_key, "root", lifetime=-60))
    assert "slurmrestd refuses the token" in note and "the token expired at" in note
    assert wait == 30.0  # it will not fix itself: the cap at once


def test_another_users_token_is_said_to_be_refused(slurm: RealSlurm) -> None:
    note, _ = _note(slurm, make_jwt(slurm.jwt_key, "alice"))
    assert "slurmrestd refuses the token" in note and "the token is for user 'alice', not 'root'" in note


def test_a_good_token_reads(slurm: RealSlurm) -> None:
    clock = [0.0]
    poller = SlurmPoller(SlurmRest(slurm.url, user="root", token=slurm.token()), clock=lambda: clock[0])
    view = poller.poll()
    assert not view.stale and view.note == "" and view.nodes
