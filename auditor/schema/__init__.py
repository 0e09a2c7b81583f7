"""Documents with source positions, the enum sites in them, and the analysis cache.

The lowest layer: it knows JSON, YAML and JSON Schema, nothing about tokenizers.
"""
