"""The toy family's options, declared once: `numascope toy`'s flags, Toy's defaults and
checks come from these rows."""

from numascope.options import Option, Table

TABLE = Table("toy", (
    Option("--n", "numbers to sum in each repetition", kind="int", default=100_000, low=1,
           high=10**8, metavar="N"),
    Option("--reps", "timed repetitions", kind="int", default=3, low=1, high=1000,
           metavar="N"),
))
