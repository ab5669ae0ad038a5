"""Scheduler backends folded into one neutral model (SCHEDULERS.md §1, §4-§7).

Why a package: Kueue, Volcano, coscheduling and YuniKorn each describe queues, gangs and "why
pending" in their own vocabulary and objects. Their decoders (``wire``), the YuniKorn REST queue
tree (``yunikorn``), the queue tree they fold into (``queues``) and the per-job evidence that turns
conditions into a state and a reason (``evidence``) live here, so that the core, the tables and
the console only ever see :class:`hpctop.model.objects.Job` and
:class:`hpctop.model.objects.QueueInfo`. Nothing here runs for a cluster without these backends:
the store consults it only once such an object has arrived.
"""
