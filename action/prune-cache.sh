#!/usr/bin/env bash
# The Action's cache check (action.yml), after the cache is restored and before pcdlint runs:
# action/prune_cache.py, under `python -I` (nothing from the workspace is imported).
set -uo pipefail
exec "${PCDLINT_PYTHON:-python}" -I "$(dirname "${BASH_SOURCE[0]}")/prune_cache.py"
