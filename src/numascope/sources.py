"""Where numascope's thresholds come from: the publications (PUBLICATIONS) and, for each
threshold that turns a figure into a verdict (a flag, a warning, advice, a significant
difference), its value, what it decides, and its basis (THRESHOLDS): a publication's figure,
or a derivation from one. docs/sources.md is made from this table (tests/test_sources.py
keeps the two equal); advice items and the docs cite `cite(key)`.

A source names authors or lab, title and date, never a file of any machine: a reader
anywhere can look it up."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Publication:
    key: str
    who: str        # authors or lab
    title: str
    when: str       # date or year, and where it appeared

    def text(self) -> str:
        return f"{self.who}, '{self.title}', {self.when}"


@dataclass(frozen=True)
class Cited:
    name: str       # module.CONSTANT
    value: str      # as the code has it
    decides: str    # what crossing it does
    source: str     # a Publication key
    basis: str      # the figure of the publication, or the derivation from it


_PUBS = (
    Publication("dell-naples-2018", "Dell HPC and AI Innovation Lab (Kochhar, Cherlopalle, "
                "Weage)", "AMD EPYC - STREAM, HPL, InfiniBand and WRF performance study",
                "September 2018"),
    Publication("dell-rome-2019", "Dell HPC and AI Innovation Lab (Kochhar, Cherlopalle, "
                "Weage)", "AMD Rome - is it for real? Architecture and initial HPC "
                "performance", "October 2019"),
    Publication("mccalpin-1995", "J. D. McCalpin", "Memory Bandwidth and Machine Balance in "
                "Current High Performance Computers", "IEEE TCCA Newsletter, December 1995 "
                "(STREAM; its run rules)"),
    Publication("hpl-2.3", "A. Petitet, R. C. Whaley, J. Dongarra, A. Cleary", "HPL - A "
                "Portable Implementation of the High-Performance Linpack Benchmark for "
                "Distributed-Memory Computers", "version 2.3, Netlib, December 2018"),
    Publication("freivalds-1977", "R. Freivalds", "Probabilistic Machines Can Use Less "
                "Running Time", "IFIP Congress 1977"),
    Publication("iglewicz-hoaglin-1993", "B. Iglewicz, D. C. Hoaglin", "How to Detect and "
                "Handle Outliers", "ASQC Quality Press, 1993 (the modified z-score's 3.5)"),
    Publication("fisher-1958", "W. D. Fisher", "On Grouping for Maximum Homogeneity",
                "Journal of the American Statistical Association 53, 1958"),
    Publication("david-nagaraja-2003", "H. A. David, H. N. Nagaraja", "Order Statistics",
                "3rd edition, Wiley, 2003 (section 7.1: quantiles' order-statistic intervals)"),
    Publication("holm-1979", "S. Holm", "A Simple Sequentially Rejective Multiple Test "
                "Procedure", "Scandinavian Journal of Statistics 6(2), 1979"),
    Publication("welch-1947", "B. L. Welch", "The Generalization of 'Student's' Problem when "
                "Several Different Population Variances are Involved", "Biometrika 34, 1947"),
    Publication("fisher-1925", "R. A. Fisher", "Statistical Methods for Research Workers",
                "Oliver and Boyd, 1925 (the 5 % level)"),
    Publication("amd-55723", "AMD", "Software Optimization Guide for AMD Family 17h "
                "Processors", "publication 55723 rev. 3.00, June 2017 (Zen: section 2.11, "
                "Load-Store Unit)"),
    Publication("amd-56305", "AMD", "Software Optimization Guide for AMD Family 17h Models "
                "30h and Greater Processors", "publication 56305 rev. 3.02, March 2020 (Zen 2: "
                "section 2.12, Load-Store Unit)"),
    Publication("amd-56665", "AMD", "Software Optimization Guide for AMD EPYC 7003 "
                "Processors", "publication 56665 rev. 3.00, October 2020 (Zen 3: section "
                "2.12, Load-Store Unit)"),
    Publication("amd-57647", "AMD", "Software Optimization Guide for the AMD Zen4 "
                "Microarchitecture", "publication 57647 rev. 3.00, January 2023 (section "
                "2.12, Load-Store Unit)"),
    Publication("amd-58455", "AMD", "Software Optimization Guide for the AMD Zen5 "
                "Microarchitecture", "publication 58455 rev. 1.00, August 2024 (section "
                "2.12, Load-Store Unit)"),
    Publication("intel-248966", "Intel", "Intel 64 and IA-32 Architectures Optimization "
                "Reference Manual, Volume 1", "order number 248966-050, April 2024 (the cache "
                "parameter tables of the Sandy Bridge, Haswell, Skylake Server, Ice Lake "
                "(Sunny Cove) and Golden Cove microarchitectures: peak L1 bandwidth in bytes "
                "per cycle)"),
    Publication("linux-mempolicy", "The Linux kernel documentation", "NUMA Memory Policy "
                "(MPOL_INTERLEAVE, MPOL_WEIGHTED_INTERLEAVE)", "admin-guide/mm, Linux 6.9, "
                "2024"),
)
PUBLICATIONS: dict[str, Publication] = {p.key: p for p in _PUBS}

_PRACTICAL_BASIS = ("identical servers differ by 5-10 % in STREAM and about 5 % in HPL "
                    "(server-to-server spread over 64 servers): a smaller difference is "
                    "within what the same hardware varies")
_NOISE_BASIS = ("derived from the practical threshold (5 %, dell-rome-2019): a disturbance "
                "of this size takes at most about that share of the benchmark's time, so it "
                "cannot by itself make a difference the advice calls an effect")

THRESHOLDS: tuple[Cited, ...] = (
    Cited("advice.PRACTICAL", "0.05", "the smallest difference any advice rule or "
          "configuration comparison calls an effect", "dell-rome-2019", _PRACTICAL_BASIS),
    Cited("advice.L3_SATURATION", "0.95", "one thread per L3 counts as reaching all-core "
          "bandwidth", "dell-rome-2019", "triad with one core per CCX is 9-17 % above all "
          "cores (Rome, NPS4); within the practical 5 % of it counts as reaching it"),
    Cited("advice.rule_remote_memory", "PRACTICAL", "a remote node pair is called slower "
          "than local", "dell-naples-2018", "remote same-socket triad about 30 % and "
          "other-socket about 65 % slower than local: effects far beyond 5 %"),
    Cited("results.run.noise_warnings (other processes)", "0.05 of the CPU time",
          "a run is disturbed; no advice rule reads its numbers", "dell-rome-2019",
          _NOISE_BASIS),
    Cited("results.run.noise_warnings (steal)", "0.02 of the CPU time", "a run is disturbed",
          "dell-rome-2019", _NOISE_BASIS + " (steal is taken from the pinned threads "
          "themselves, hence the lower limit)"),
    Cited("results.run.noise_warnings (clock drop)", "0.03", "a run is disturbed",
          "dell-rome-2019", _NOISE_BASIS + " (a compute-bound figure moves with the clock "
          "one to one)"),
    Cited("readiness.BUSY_CPU_SHARE", "0.10 of one CPU", "readiness names a busy process",
          "dell-rome-2019", "twice the practical 5 %: a process this busy on one CPU can "
          "take more than the spread of identical servers from a thread pinned there"),
    Cited("readiness.IMBALANCE", "0.75", "readiness warns of unbalanced node memory",
          "dell-naples-2018", "a balanced population gives every node the same memory (32 GB "
          "per node, 1 DIMM per channel, 2 channels per node); one DIMM missing leaves its "
          "node 50 %: 0.75 is half-way between the two"),
    Cited("analysis.compare.ALPHA", "0.05", "a difference is significant (Holm-adjusted)",
          "fisher-1925", "the conventional 5 % level, adjusted over a comparison's metrics "
          "by Holm (holm-1979)"),
    Cited("analysis.compare.MIN_RUNS", "3", "compare tests runs as samples at all",
          "welch-1947", "with 2 runs a side Welch's test has 1-2 degrees of freedom (a "
          "critical t of 4.3-12.7 at 5 %) and each side's spread comes from 2 values; 3 a "
          "side is the fewest that gives each side a spread with 2 degrees of freedom"),
    Cited("analysis.compare.MIN_EFFECT_PCT", "1.0 %", "the smallest change compare calls "
          "better or worse", "dell-rome-2019", "a fifth of the practical 5 %: compare "
          "reports measured changes of one configuration; advice applies the full 5 %"),
    Cited("families.bandwidth.outliers.Z_LIMIT", "3.5", "a bandwidth repetition far above "
          "its variant's median is implausible (with MIN_EXCESS)", "iglewicz-hoaglin-1993",
          "the outlier limit of the modified z-score 0.6745 (x - median) / MAD"),
    Cited("families.bandwidth.outliers.MIN_EXCESS", "0.25", "an implausible repetition is "
          "also this far above the median (decides when MAD is 0)", "dell-rome-2019",
          "identical servers' STREAM figures spread 5-10 %: a repetition 25 % above its own "
          "case's median is 2.5 times the widest published spread beyond it, not noise but a "
          "timing window that missed work"),
    Cited("families.bandwidth.outliers.MAX_SHARE", "0.10", "past this share of implausible "
          "repetitions (or a fast mode this large: two modes by fisher-1958) nothing is "
          "excluded and the case is disturbed (bimodal)", "iglewicz-hoaglin-1993",
          "derived: an undisturbed run breaking each repetition with probability 1 % breaks "
          "more than max(1, 10 %) of n with probability at most 1.5 % for any n from 5 to "
          "1000 (binomial); dropping at most 10 % from the top keeps the median at or above "
          "the 45th percentile"),
    Cited("families.latency.distribution.MIN_BEYOND", "100", "a tail figure (p99, p99.9) "
          "from fewer timed groups beyond it is marked thin", "david-nagaraja-2003", "with k "
          "points beyond a quantile its rank is uncertain by about 1/sqrt(k) of the tail: "
          "10 % at 100 (one chunk's 16 gave 25 %)"),
    Cited("families.bandwidth.sizes.LLC_FACTOR", "4", "the default array size (each array "
          "at least 4x the caches in use)", "mccalpin-1995", "STREAM's run rule: each array "
          "at least 4 times the sum of the last-level caches"),
    Cited("pages.FIRST_TOUCH_SLACK", "0.05 of a thread's pages",
          "first-touch pages off the thread's node are flagged", "dell-naples-2018",
          "at the measured 65 % remote penalty, 5 % of the pages remote move triad by about "
          "3 %, under the practical 5 % (dell-rome-2019)"),
    Cited("pages.INTERLEAVE_MIN_SHARE", "0.5 of the even share",
          "an interleave that left a node short is an error", "linux-mempolicy",
          "MPOL_INTERLEAVE places pages round robin, one page at a time: a node at half its "
          "share lost pages to a full node, which sampling cannot explain"),
    Cited("pages.WEIGHTED_TOLERANCE", "0.05 per node",
          "a weighted interleave off its weights is an error", "linux-mempolicy",
          "MPOL_WEIGHTED_INTERLEAVE places pages by the weights exactly, up to one round of "
          "pages; 5 % is beyond that for any measured array size"),
    Cited("families.c2c.clusters.TOLERANCE", "0.25", "a core-to-core latency opens a new "
          "level", "dell-naples-2018", "the published node distances 10/16/22/28 step by at "
          "least 27 % (28/22) from one level to the next: 25 % is just below the smallest "
          "published step"),
    Cited("families.compute / peaks.hpcc THRESHOLD", "16.0", "a DGEMM or LU result is wrong",
          "hpl-2.3", "HPL's scaled residual check passes under 16.0 (HPL.dat's default "
          "threshold); the DGEMM check is Freivalds' product test (freivalds-1977) scaled "
          "the same way"),
    Cited("report.verdicts.REFERENCE_SPREAD", "0.10", "a figure within it of the published "
          "one for a matching host is 'as published'; beyond it 'low' or 'high'",
          "dell-rome-2019", "identical servers differ by 5-10 % in STREAM and about 5 % in "
          "HPL (64 servers): a host within the widest of these spreads of a published figure "
          "measured on the same CPU model, memory mode and DIMMs is as published"),
)


def cite(key: str) -> str:
    """The publication's citation, for a threshold's source text."""
    return PUBLICATIONS[key].text()


def by_name(name: str) -> Cited:
    return next(c for c in THRESHOLDS if c.name == name)


def markdown() -> str:
    """The generated part of docs/sources.md: publications, then thresholds."""
    lines = ["| key | publication |", "| --- | --- |"]
    lines += [f"| `{p.key}` | {p.text()} |" for p in _PUBS]
    lines += ["", "| threshold | value | decides | source | basis |",
              "| --- | --- | --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.value} | {c.decides} | `{c.source}` | {c.basis} |"
              for c in THRESHOLDS]
    return "\n".join(lines)
