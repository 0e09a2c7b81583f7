#!/usr/bin/env bash
# The GitHub Action's lint step (action.yml), runnable locally: inputs arrive as environment
# variables, never interpolated into the script. Runs pcdlint once with `--format github`
# (annotations on stdout) and `--output-sarif`, writes a Markdown summary to
# $GITHUB_STEP_SUMMARY and step outputs to $GITHUB_OUTPUT, and exits with pcdlint's exit code.
set -uo pipefail

paths_input="${PCDLINT_PATHS:-.}"
tokenizers_input="${PCDLINT_TOKENIZERS:-qwen2.5}"
fail_on="${PCDLINT_FAIL_ON:-error}"
sarif_file="${PCDLINT_SARIF_FILE:-pcdlint.sarif}"
python="${PCDLINT_PYTHON:-python}"
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
outputs="${GITHUB_OUTPUT:-/dev/null}"

set -f  # split inputs on whitespace (and commas for tokenizers) without glob expansion
read -r -a paths <<< "$paths_input"
read -r -a tokenizers <<< "${tokenizers_input//,/ }"
set +f

args=(check --format github --output-sarif "$sarif_file" --fail-on "$fail_on")
for tokenizer in "${tokenizers[@]}"; do
  args+=(--tokenizer "$tokenizer")
done

rm -f -- "$sarif_file"
pcdlint "${args[@]}" -- "${paths[@]}"
code=$?

echo "exit-code=$code" >> "$outputs"
if [ -f "$sarif_file" ]; then
  echo "sarif-file=$sarif_file" >> "$outputs"
fi
"$python" -m auditor.reporting.action_summary --exit-code "$code" --fail-on "$fail_on" "$sarif_file" >> "$summary"
exit "$code"
