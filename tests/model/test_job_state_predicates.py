"""JobState's predicates read module-level sets (a speed change, issue 16 P3): each member still
answers what it answered when the predicates built their tuples per call."""

from hpctop.model.states import JobState

PENDING = {"PENDING", "HELD", "REQUEUED", "PREEMPTED"}
ACTIVE = {"STARTING", "RUNNING", "COMPLETING", "SUSPENDED"}
FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OOM"}


def test_every_member_answers_as_before() -> None:
    for state in JobState:
        assert state.is_pending == (state.value in PENDING), state
        assert state.is_active == (state.value in ACTIVE), state
        assert state.is_finished == (state.value in FINISHED), state
    assert (
        not JobState.UNKNOWN.is_pending
        and not JobState.UNKNOWN.is_active
        and not JobState.UNKNOWN.is_finished
    )


def test_a_plain_string_of_a_state_is_not_a_member_answer() -> None:
    # the predicates are properties of members only; the sets hold members, equal to their values
    assert "RUNNING" == JobState.RUNNING and JobState("RUNNING").is_active
