"""Compute: FLOP/s (DGEMM, LU, HPL through hpcc) against the peak at the measured clock.

The folder holds everything only this family's: options, bench, command, figures,
headline, cost and its C kernel. What the rest of numascope reads of it without importing
its bench is below (the registry, numascope.families, finds it)."""

# its place in the studies' order (the report's sections, the headline lines)
ORDER = 40
# the report section holding its tables: (id, title)
SECTION = ("compute", "Compute and HPL")
# fleet check's default tolerance for its metrics, in %
TOLERANCE_PCT = 10.0
# `numascope peak` sets the measured triad against the DRAM peak
STANDS_ON = ('bandwidth',)
