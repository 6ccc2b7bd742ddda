"""Compression (Blosc2): whether decompress-and-sum beats the plain sum over memory, per
codec, level, filter and threads.

The folder holds everything only this family's: options, bench, command, figures,
headline, cost and its C kernel. What the rest of numascope reads of it without importing
its bench is below (the registry, numascope.families, finds it)."""

# its place in the studies' order (the report's sections, the headline lines)
ORDER = 50
# the report section holding its tables: (id, title)
SECTION = ("compress", "Compression")
# fleet check's default tolerance for its metrics, in %
TOLERANCE_PCT = 15.0
