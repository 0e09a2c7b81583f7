"""Sharded decision evals (``eval --shard I/N``) and their merge (``pcdlint eval-merge``)."""

from __future__ import annotations

MAX_SHARDS = 4096
