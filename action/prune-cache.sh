#!/usr/bin/env bash
# The Action's cache pruning (action.yml): in $PCDLINT_CACHE_DIR, the analysis and encoding
# cache entries not written for PCDLINT_PRUNE_DAYS days (default 30) are removed, with the
# folders left empty. The cache is saved under a new key every run (its entries keep up with
# the repository), so without this the entries of every past version of every linted file
# would be carried from run to run. An entry of a file that has not changed is written again
# by the next run that lints it (that file alone is linted cold once). Converted tokenizers and
# rank tables, at the top of the directory, are kept.
set -uo pipefail

cache="${PCDLINT_CACHE_DIR:-}"
days="${PCDLINT_PRUNE_DAYS:-30}"
if [ -z "$cache" ] || ! [[ "$days" =~ ^[0-9]+$ ]]; then
  exit 0
fi
for folder in "$cache/analysis" "$cache/encodings"; do
  if [ -d "$folder" ]; then
    find "$folder" -type f -mtime "+$days" -delete 2>/dev/null
    find "$folder" -mindepth 1 -type d -empty -delete 2>/dev/null
  fi
done
exit 0
