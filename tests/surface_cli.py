"""Surface rows for the command line itself (see tests/surface.py)."""

from surface import Bad

BAD = [
    Bad(["no-such-command"], 2, "invalid choice", "unknown command"),
    Bad(["bw", "--no-such-flag"], 2, "unrecognized arguments", "unknown flag"),
]
