"""Storage (fio): IOPS and bandwidth per drive by placement relative to the device's
node, and drive scaling.

The folder holds everything only this family's: options, bench, command, figures,
headline, cost and its C kernel. What the rest of numascope reads of it without importing
its bench is below (the registry, numascope.families, finds it)."""

# its place in the studies' order (the report's sections, the headline lines)
ORDER = 60
# the report section holding its tables: (id, title)
SECTION = ("storage", "Storage")
# fleet check's default tolerance for its metrics, in %
TOLERANCE_PCT = 20.0
