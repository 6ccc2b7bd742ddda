"""Errors that end a command with one clear line instead of a traceback."""


class UserError(Exception):
    """Something the user can fix (bad CPU list, unknown node, unreadable file): exit 2."""

    exit_code = 2


class MeasurementError(Exception):
    """A benchmark's own validation failed: the number is not a result. Exit 3."""

    exit_code = 3


class Unavailable(Exception):
    """A stage cannot run here (no permission, missing tool); carries the reason."""

    exit_code = 4
