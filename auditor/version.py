"""The one place pcdlint's version is written (pyproject.toml reads it; `auditor.__version__`)."""

__version__ = "0.1.0"
