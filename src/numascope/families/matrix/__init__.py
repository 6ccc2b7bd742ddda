"""Node-to-node latency and bandwidth matrices: the latency family's chase and the
bandwidth family's read kernel between every pair of NUMA nodes.

The folder holds everything only this family's: options, bench, command, figures,
headline, cost and its C kernel. What the rest of numascope reads of it without importing
its bench is below (the registry, numascope.families, finds it)."""

# its place in the studies' order (the report's sections, the headline lines)
ORDER = 25
# the report section holding its tables: (id, title)
SECTION = ("latency", "Latency: idle, NUMA matrices, loaded, misses in flight")
# fleet check's default tolerance for its metrics, in %
TOLERANCE_PCT = 15.0
# the node-to-node matrices run the latency family's chase and the bandwidth family's
# read kernel between node pairs
STANDS_ON = ('bandwidth', 'latency')
