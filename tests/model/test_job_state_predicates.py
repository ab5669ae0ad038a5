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


def test_a_state_looked_up_by_its_value_answers_like_the_member() -> None:
    # the sets hold members; a member hashes and compares as its value (StrEnum)
    looked_up = JobState("RUNNING")
    assert looked_up is JobState.RUNNING and looked_up.is_active and not looked_up.is_finished
