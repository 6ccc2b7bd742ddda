"""STREAM-style memory bandwidth: kernels, thread scaling, placements, per domain,
working-set sweeps and memory tiers.

The folder holds everything only this family's: options, bench, command, figures,
headline, cost and its C kernel. What the rest of numascope reads of it without importing
its bench is below (the registry, numascope.families, finds it)."""

# its place in the studies' order (the report's sections, the headline lines)
ORDER = 10
# the report section holding its tables: (id, title)
SECTION = ("bandwidth", "Memory bandwidth")
# fleet check's default tolerance for its metrics, in %
TOLERANCE_PCT = 10.0
