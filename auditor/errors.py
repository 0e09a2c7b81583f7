"""Errors the user can cause. Each carries one line that the CLI prints before exiting 2."""


class UsageError(Exception):
    """Bad input: a file that cannot be read or parsed, an unknown tokenizer, a bad option."""


class InputFileError(UsageError):
    """One input file is unusable; the others are still linted."""

    def __init__(self, path: str, message: str, line: int | None = None, column: int | None = None):
        self.path, self.line, self.column, self.message = path, line, column, message
        where = path if line is None else f"{path}:{line}:{column or 1}"
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, str, int | None, int | None]]:
        # rebuilt from its parts when a worker process sends it back
        return type(self), (self.path, self.message, self.line, self.column)


class TokenizerError(UsageError):
    """A tokenizer spec that cannot be resolved offline, or a file that is not a tokenizer."""


class ConfigError(UsageError):
    """A config file that cannot be read, parsed or understood; `path` names the file (the
    language server shows the message as a diagnostic on it)."""

    def __init__(self, path: object, message: str):
        self.path, self.message = str(path), message
        super().__init__(f"{path}: {message}")
