"""The exception the decoder raises for problems a user can fix, and the one kind of it a run
over many requests tells apart."""


class DecoderError(Exception):
    """A user-fixable problem (missing model, cache miss, torch absent).

    The message is one actionable line; the CLI prints it and exits 2.
    """


class ServerUnreachable(DecoderError):
    """No answer at all from the server after the retries (refused, reset, no route): a run over
    many rows stops when none of its first rows got through, rather than failing every row."""
