"""Runs split into item shards: ``merge`` joins shard run directories into one run,
``submit`` runs the shards as a SLURM job array or local processes (submitit) or as Ray
tasks, then merges. ``submitit`` and ``ray`` come with ``pip install 'lingdiag[cluster]'``.
"""

from lingdiag.cluster.merge import MergeResult, merge
from lingdiag.cluster.submit import EXECUTORS, Resources, ShardOutcome, SubmitOptions, SubmitResult, shard_dir, submit

__all__ = ["EXECUTORS", "MergeResult", "Resources", "ShardOutcome", "SubmitOptions", "SubmitResult", "merge",
           "shard_dir", "submit"]
