"""What an error answer says of the token, for the answers the real 22.05 harness cannot give.

Newer slurmrestd versions name an authentication failure in the body; the texts are Slurm's own
(src/common/slurm_errno.c, SchedMD/slurm master at 284c3b95: SLURM_PROTOCOL_AUTHENTICATION_ERROR
"Protocol authentication error", ESLURM_AUTH_CRED_INVALID "Invalid authentication credential",
ESLURM_AUTH_EXPIRED "Authentication credential expired", ESLURM_REST_AUTH_FAIL "Authentication
failure"). The bare 22.05 answer and the token-claims checks are tested against the real Slurm in
test_token_note_real.py; here the other cases, and that a non-auth error is not taken for one.
"""

from __future__ import annotations

import pytest

from hpctop.sources.slurm.rest import token_verdict
from tests.slurm.realslurm import make_jwt


@pytest.mark.parametrize(
    "said",
    [
        "Protocol authentication error",
        "Invalid authentication credential",
        "Authentication credential expired",
        "Authentication failure",
    ],
)
def test_slurms_auth_words_mean_the_token_is_refused(said: str) -> None:
    answer = {"errors": [{"error": said, "error_number": 1007, "source": "slurm_load_jobs"}]}
    assert token_verdict(500, answer, token=None, user="root") == ("refused", "")


def test_a_401_is_refused_and_slurms_other_errors_are_not_about_the_token() -> None:
    assert token_verdict(401, None, token=None, user="root")[0] == "refused"
    invalid = {"errors": [{"error": "Invalid job id specified", "error_number": 2017}]}
    assert token_verdict(500, invalid, token=None, user="root") == ("", "")


def test_a_bare_unspecified_error_with_a_sound_token_stays_maybe() -> None:
    bare = {"errors": [{"error": "Unspecified error", "error_number": -1}]}
    token = make_jwt(b"k" * 32, "root")
    verdict, why = token_verdict(500, bare, token=token, user="root")
    assert verdict == "maybe" and "cannot be reached" in why
    assert token_verdict(500, bare, token="not-a-jwt", user="root")[0] == "maybe"
