"""pcdlint's rules, one per module; discovered automatically (see auditor.linter.registry)."""
