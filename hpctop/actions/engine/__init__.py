"""The actions engine: how any action on a live cluster is previewed, sent, answered and settled.

Why a package of its own: the rules that make a write safe (RELIABILITY.md §2: preconditions,
the server's dry run, never retrying blindly, settling a lost answer by re-reading, the access
review right before sending, the audit log) are the same whatever the backend. They are written
once here, and each backend contributes only its *plan*: which requests an action is, what is
refused and why, and what its controllers do next (:mod:`hpctop.actions.engine.plan`).

- :mod:`~hpctop.actions.engine.objects`: reading objects (fields, summaries, what changed);
- :mod:`~hpctop.actions.engine.targets`: where an object lives, one request (:class:`Step`), what a
  preview saw (:class:`Seen`), and the shared request shapes (a guarded delete, an RV-guarded patch);
- :mod:`~hpctop.actions.engine.plan`: the protocol a backend's plan follows, and the shared plan
  shapes (suspend-field kinds, scale-to-zero kinds);
- :mod:`~hpctop.actions.engine.permissions`: SelfSubjectRulesReview/AccessReview/Review;
- :mod:`~hpctop.actions.engine.rules`: what each HTTP answer means (409/404/422/403/429/5xx);
- :mod:`~hpctop.actions.engine.settle`: polling and settling an unknown outcome;
- :mod:`~hpctop.actions.engine.core`: preview, execute, the bulk action;
- :mod:`~hpctop.actions.engine.binding`: gang binding for the headless scheduler.
"""
