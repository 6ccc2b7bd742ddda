"""Advice from stored runs: each rule reads measured results (or recorded host facts) and
gives advice only with its evidence: the run ids, cases, medians with their repetition
counts, the statistic behind a claimed difference, the threshold with its source, and the
rule that fired. A rule whose results show no effect gives nothing.

What counts as evidence:
- A run the noise check marked disturbed (other processes, steal, a clock drop: its
  record's noise warnings), or one with a bandwidth case whose repetitions fell in two modes
  (params "bimodal": memory shared with other work), gives exactly one item, "re-run on a
  quiet machine", with the figures, and no rule reads its numbers; a smoke run's numbers
  (caches) are not read either.
- Conditions set in separate runs (tags: nps=1 against nps=4) are compared with the runs as
  the samples, as `numascope compare` does (advice.configuration): three runs a side at
  least; with fewer the item says "inconclusive", with the figures and no verdict.
- A comparison inside one run (one thread per L3 against all cores, a remote node against
  the local one, one node against another for a drive, compressed against plain sums) uses
  the run's repetitions as samples; it is made only in a quiet run, and says so ("within
  one quiet run").

Rules (RULES, in order):
    readiness         recorded settings that distort the stored numbers
    configuration     tagged configurations compared over runs (advice.configuration)
    l3_saturation     one thread per L3 reaches all-core bandwidth (within one quiet run)
    remote_memory     remote-node bandwidth/latency worse than local (matrix, one quiet run)
    compress_threads  compressed sums pay off from N threads up (paired repetitions)
    storage_node      a drive is fastest from one node (fio placement rows, one quiet run)

Differences inside one run are tested on the logs of the repetitions (a ratio), Welch's
t-test (numascope.analysis.stats, on scipy.stats), Holm-adjusted within a rule's family of
comparisons; a claim needs adjusted p < ALPHA and a change of at least PRACTICAL, whose
source every item records beside it."""

from numascope.advice.kinds import (
    ALPHA,
    BIMODAL,
    L3_SATURATION,
    MIN_REPS,
    PAIRED,
    PRACTICAL,
    QUIET,
    WITHIN,
    Advice,
    Threshold,
    rounded,
)
from numascope.advice.rules import (
    DISTORTING,
    RULES,
    advise,
    disturbed,
    log_ratio_test,
    paired_log_test,
    rerun_quietly,
    rule_compress_threads,
    rule_configuration,
    rule_l3_saturation,
    rule_readiness,
    rule_remote_memory,
    rule_storage_node,
)

__all__ = ["ALPHA", "BIMODAL", "DISTORTING", "L3_SATURATION", "MIN_REPS", "PAIRED",
           "PRACTICAL", "QUIET", "RULES", "WITHIN", "Advice", "Threshold", "advise",
           "disturbed", "log_ratio_test", "paired_log_test", "rerun_quietly", "rounded",
           "rule_compress_threads", "rule_configuration", "rule_l3_saturation",
           "rule_readiness", "rule_remote_memory", "rule_storage_node"]
