"""One truth per node: whether a run did everything asked of it.

A node is healthy ("complete") only when its run finished and every stage it asked for ran
and validated, or does not apply here (a stage skipped with its reason, before it measured:
no second CPU for an MPI pair, no MPI, no --io-dir). A stage that failed makes the node
"failed"; one stopped, never reached or incomplete (its cases built, then a tool missing or
no permission: fio with --io-dir given, a PermissionError part-way) makes it "interrupted",
which says nothing against the node and is not ok (fleet check: inconclusive); a node with
no record at all (numascope.fleet.manifest) is "missing". Every fleet output (fleet run,
report, check, the HTML section, Prometheus' numascope_node_ok and numascope_stage_ok)
reads this one function, so that they agree.
"""

from __future__ import annotations

from typing import Any, NamedTuple

OK = "complete"
# worst first: the status a node takes from its worst stage
_STAGE_RANK = {"failed": "failed", "interrupted": "interrupted", "not run": "interrupted",
               "pending": "interrupted", "incomplete": "interrupted"}
NOT_MEASURED = ("failed", "missing")     # run statuses with nothing to analyse


class Verdict(NamedTuple):
    ok: bool                    # complete: everything asked ran and passed (or was n/a)
    status: str                 # complete | failed | interrupted | missing
    reason: str                 # why not ok ("" when ok): the first failing stage's reason
    stages: dict[str, str]      # stage name -> its status (done, skipped, failed, …)


def verdict(rec: Any) -> Verdict:
    """The node's verdict from its record (a RunRecord or a fleet.load light record: any
    object with .status and .stages of StageInfo). A record whose own status is failed,
    missing, interrupted or running is never ok; else its worst stage decides."""
    stages = {s.name: s.status for s in rec.stages}
    status = rec.status if rec.status in ("failed", "missing", "interrupted") else \
        "interrupted" if rec.status == "running" else OK
    for want in ("failed", "interrupted"):
        bad = [s for s in rec.stages if _STAGE_RANK.get(s.status) == want]
        if bad and (status == OK or status == "interrupted" and want == "failed"):
            status = want
    if status == OK:
        return Verdict(True, OK, "", stages)
    return Verdict(False, status, _reason(rec, status), stages)


def _reason(rec: Any, status: str) -> str:
    for want in ("failed", "interrupted", "incomplete", "not run", "pending"):
        for s in rec.stages:
            if s.status == want:
                why = s.reason or s.status
                return why if s.name == "fleet" else f"stage {s.name} {s.status}: {why}"
    if status == "interrupted" and rec.status == "running":
        return "the run never finished (its process ended without closing it)"
    return f"run {rec.status}"
