import os
import sys


def _drop_working_directory() -> None:
    """`python -m auditor` puts the working directory first on sys.path, so a `click.py`,
    `csv.py` or `orjson.py` in the linted tree would be imported in place of the real one. It
    is dropped unless this package itself was found there (a source checkout); a `mod:Model`
    reference still imports from it, explicitly (auditor.schema.python_source)."""
    if not sys.path or sys.path[0] not in ("", os.getcwd()):
        return
    first = os.path.abspath(sys.path[0] or os.curdir)
    if os.path.dirname(os.path.dirname(os.path.abspath(__file__))) != first:
        del sys.path[0]


_drop_working_directory()

from auditor.cli.main import main  # noqa: E402

if __name__ == "__main__":
    main()
