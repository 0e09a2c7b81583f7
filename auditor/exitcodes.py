"""Exit codes are a contract with CI gates and pre-commit: never change their meaning."""

EXIT_CLEAN = 0  # nothing at or above --fail-on
EXIT_FINDINGS = 1  # findings at or above --fail-on
EXIT_USAGE = 2  # usage or input error: bad option, unreadable or malformed file, unknown tokenizer
