"""Slurm through slurmrestd: the Slurm side of Slurm-on-Kubernetes (Slinky, SUNK) or a plain Slurm."""
