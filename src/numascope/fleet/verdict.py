"""One truth per node: whether a run did everything asked of it.

A node is healthy ("complete") only when its run finished and every stage it asked for ran
and validated, or does not apply here (a stage skipped with its reason, before it measured:
no second CPU for an MPI pair, no MPI, no --io-dir). A stage that failed makes the node
"failed"; one stopped or never reached makes it "interrupted"; one incomplete (its cases
built, then a tool missing or no permission: fio with --io-dir given, a PermissionError
part-way) makes it "incomplete": asked and not done, which says nothing against the node
and is not ok (fleet check: inconclusive, as for "interrupted"); a node with no record at all (numascope.fleet.manifest) is "missing". Every fleet output (fleet run,
report, check, the HTML section, Prometheus' numascope_node_ok and numascope_stage_ok)
reads this one function, so that they agree.
"""

from __future__ import annotations

from typing import Any, NamedTuple

OK = "complete"
# worst first: the status a node takes from its worst stage
_STAGE_RANK = {"failed": "failed", "interrupted": "interrupted", "not run": "interrupted",
               "pending": "interrupted", "incomplete": "incomplete"}
# how bad a node status is: a worse stage overrides a record's status (never "missing")
_SEVERITY = {OK: 0, "incomplete": 1, "interrupted": 2, "failed": 3}
NOT_MEASURED = ("failed", "missing")     # run statuses with nothing to analyse


class Verdict(NamedTuple):
    ok: bool                    # complete: everything asked ran and passed (or was n/a)
    status: str                 # complete | failed | interrupted | incomplete | missing
    reason: str                 # why not ok ("" when ok): the first failing stage's reason
    stages: dict[str, str]      # stage name -> its status (done, skipped, failed, …)


def verdict(rec: Any) -> Verdict:
    """The node's verdict from its record (a RunRecord or a fleet.load light record: any
    object with .status and .stages of StageInfo). A record whose own status is failed,
    missing, interrupted or running is never ok; else its worst stage decides."""
    stages = {s.name: s.status for s in rec.stages}
    status = rec.status if rec.status in ("failed", "missing", "interrupted", "incomplete") \
        else "interrupted" if rec.status == "running" else OK
    for s in rec.stages:
        want = _STAGE_RANK.get(s.status)
        if want and status != "missing" and _SEVERITY[want] > _SEVERITY[status]:
            status = want
    if status == OK:
        return Verdict(True, OK, "", stages)
    return Verdict(False, status, _reason(rec, status), stages)


def _reason(rec: Any, status: str) -> str:
    if status == "interrupted" and rec.status == "running":   # its stages never closed
        return ("the run never finished (its process ended without closing it: killed, "
                "e.g. SIGKILL after a stop); the results that finished are kept")
    for want in ("failed", "interrupted", "not run", "pending", "incomplete"):
        for s in rec.stages:
            if s.status == want:
                why = s.reason or s.status
                return why if s.name == "fleet" else f"stage {s.name} {s.status}: {why}"
    return f"run {rec.status}"
