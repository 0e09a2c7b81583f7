"""Reporting: formatters by name, one output writer, escaping for each sink."""
