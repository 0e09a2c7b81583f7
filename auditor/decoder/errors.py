"""The one exception the decoder raises for problems a user can fix."""


class DecoderError(Exception):
    """A user-fixable problem (missing model, cache miss, torch absent).

    The message is one actionable line; the CLI prints it and exits 2.
    """
