#!/usr/bin/env bash
# The Action's cache settings (action.yml), written to $GITHUB_OUTPUT:
# - `key`: the cache key's tokenizer part: the `tokenizers` input split on whitespace and
#   commas, each spec cut to the characters actions/cache accepts in a key, joined with `-`, at
#   most 200 characters;
# - `enabled`: whether the cache is restored and saved at all (the `cache` input, PCDLINT_CACHE:
#   `true`, `false`, or `auto`: true except for the events whose runs hold the base branch's
#   cache scope while working on a pull request's files, PCDLINT_EVENT: pull_request_target,
#   workflow_run, issue_comment, pull_request_review, pull_request_review_comment. A cache saved
#   there would be restored by every later run of the base branch and its pull requests: a
#   cache a pull request could shape is never trusted (docs/security.md, "Caches").
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

enabled=true
case "${PCDLINT_CACHE:-auto}" in
  false) enabled=false ;;
  true) enabled=true ;;
  *)
    case "${PCDLINT_EVENT:-}" in
      pull_request_target | workflow_run | issue_comment | pull_request_review | pull_request_review_comment)
        enabled=false ;;
    esac
    ;;
esac
printf 'key=%s\nenabled=%s\n' "${key:-none}" "$enabled" >> "${GITHUB_OUTPUT:-/dev/null}"
