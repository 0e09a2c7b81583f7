#!/usr/bin/env bash
# The cache key's tokenizer part (action.yml): the `tokenizers` input split on whitespace and
# commas, each spec cut to the characters actions/cache accepts in a key, joined with `-`, at
# most 200 characters. Written to $GITHUB_OUTPUT as `key`.
set -uo pipefail
IFS=$' \t\n\r'
set -f
read -r -d '' -a specs <<< "${PCDLINT_TOKENIZERS//,/ }" || true
set +f
key=""
for spec in "${specs[@]}"; do
  clean="$(printf '%s' "$spec" | LC_ALL=C tr -c 'A-Za-z0-9._' '_')"
  key="${key:+$key-}$clean"
done
key="${key:0:200}"
printf 'key=%s\n' "${key:-none}" >> "${GITHUB_OUTPUT:-/dev/null}"
