"""Slurm-style tables (squeue, sinfo, sshare, sprio) from a snapshot and a schedule, as text, JSON or CSV."""
