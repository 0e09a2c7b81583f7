#!/usr/bin/env bash
# The GitHub Action's decision gate (action.yml, step "Decision gate"), runnable locally: a
# decision request's labeled rows answered from a recorded answers file (`--replay`: no server,
# no key, nothing sent), and, with a second version of the request, the paired comparison
# (`eval --compare --fail-if-worse MARGIN --alpha ALPHA`). Inputs arrive as environment
# variables, never interpolated into the script; file names go after their options as single
# words. Writes the text report to $GITHUB_STEP_SUMMARY (in a code block), the HTML report to
# $PCDLINT_GATE_HTML, the step output `exit-code`, and exits with pcdlint's exit code: 0 pass,
# 1 B worse than A beyond the margin (or a row failed), 2 a request the recording does not hold
# (re-record it) or another input error.
set -uo pipefail

request="${PCDLINT_DECISION_REQUEST:?decision-request is required}"
data="${PCDLINT_DECISION_DATA:?decision-data is required}"
replay="${PCDLINT_REPLAY:?replay (the recorded answers file) is required}"
request_b="${PCDLINT_DECISION_REQUEST_B:-}"
margin="${PCDLINT_FAIL_IF_WORSE:-0}"
alpha="${PCDLINT_ALPHA:-0.05}"
html="${PCDLINT_GATE_HTML:-pcdlint-decisions.html}"
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
outputs="${GITHUB_OUTPUT:-/dev/null}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT

args=(eval "$request" --data "$data" --backend systemone --replay "$replay" --quiet --output "$report")
if [ -n "$request_b" ]; then
  args+=(--compare --request-b "$request_b" --fail-if-worse "$margin" --alpha "$alpha" --output-html "$html")
fi
pcdlint "${args[@]}"
code=$?

printf 'exit-code=%s\n' "$code" >> "$outputs"
{
  printf '## pcdlint decision gate\n\n'
  if [ -s "$report" ]; then
    printf '```text\n'
    # the report's own text; a fence inside it cannot close the block
    sed 's/^```/` ``/' "$report"
    printf '```\n'
  else
    printf 'No report (exit code %s): see the step log.\n' "$code"
  fi
} >> "$summary"
cat "$report"
exit "$code"
