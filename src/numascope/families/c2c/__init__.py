"""Core-to-core latency: a cache line bounced between two cores, per relation (SMT, L3,
die, package, other package).

The folder holds everything only this family's: options, bench, command, figures,
headline, cost and its C kernel. What the rest of numascope reads of it without importing
its bench is below (the registry, numascope.families, finds it)."""

# its place in the studies' order (the report's sections, the headline lines)
ORDER = 30
# the report section holding its tables: (id, title)
SECTION = ("c2c", "Core to core")
# fleet check's default tolerance for its metrics, in %
TOLERANCE_PCT = 20.0
