#!/usr/bin/env bash
# The GitHub Action's lint step (action.yml), runnable locally: inputs arrive as environment
# variables, never interpolated into the script. Runs pcdlint once with `--format github`
# (annotations on stdout) and `--output-sarif`, writes a Markdown summary to
# $GITHUB_STEP_SUMMARY and step outputs to $GITHUB_OUTPUT, and exits with pcdlint's exit code.
#
# Nothing from the linted workspace runs: pcdlint is the installed console script and the
# summary runs under `python -I` (the working directory is never on sys.path). Inputs split on
# any whitespace, newlines included (tokenizers on commas too); file names go after `--`.
# Outputs use GITHUB_OUTPUT's delimiter syntax, so a value holding a newline stays one value.
# The SARIF file is never deleted first: pcdlint refuses an output that is a linted file before
# writing anything, and a SARIF left from before is not reported unless this run wrote one
# (exit code 0 or 1).
set -uo pipefail

paths_input="${PCDLINT_PATHS:-.}"
tokenizers_input="${PCDLINT_TOKENIZERS:-qwen2.5}"
fail_on="${PCDLINT_FAIL_ON:-error}"
max_warnings="${PCDLINT_MAX_WARNINGS:-}"
sarif_file="${PCDLINT_SARIF_FILE:-pcdlint.sarif}"
python="${PCDLINT_PYTHON:-python}"
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
outputs="${GITHUB_OUTPUT:-/dev/null}"

# split_words NAME TEXT: the words of TEXT (any whitespace, newlines included) into array NAME,
# without glob expansion
split_words() {
  local IFS=$' \t\n\r'
  set -f
  read -r -d '' -a "$1" <<< "$2" || true
  set +f
}

# set_output NAME VALUE: one step output in the delimiter syntax, with a random delimiter
set_output() {
  local delimiter
  while :; do
    delimiter="pcdlint_${RANDOM}${RANDOM}${RANDOM}${RANDOM}"
    [[ "$2" != *"$delimiter"* ]] && break
  done
  printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter" >> "$outputs"
}

split_words paths "$paths_input"
split_words tokenizers "${tokenizers_input//,/ }"
if [ "${#paths[@]}" -eq 0 ]; then
  paths=(.)
fi

args=(check --format github --output-sarif "$sarif_file" --fail-on "$fail_on")
for tokenizer in "${tokenizers[@]}"; do
  args+=(--tokenizer "$tokenizer")
done
limit=()
if [ -n "$max_warnings" ]; then
  limit=(--max-warnings "$max_warnings")
  args+=("${limit[@]}")
fi

pcdlint "${args[@]}" -- "${paths[@]}"
code=$?

set_output exit-code "$code"
report=()
if { [ "$code" -eq 0 ] || [ "$code" -eq 1 ]; } && [ -f "$sarif_file" ]; then
  set_output sarif-file "$sarif_file"
  report=("$sarif_file")
fi
"$python" -I -m auditor.reporting.action_summary --exit-code "$code" --fail-on "$fail_on" \
  "${limit[@]}" -- "${report[@]}" >> "$summary"
exit "$code"
