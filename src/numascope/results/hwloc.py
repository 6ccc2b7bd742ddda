"""A stored run's node matrix written into hwloc's XML of the machine (`numascope topo
--hwloc-xml`): the run chosen (named, else the latest holding a matrix), checked to have
been measured on the machine being written, its figures handed to the topology layer
(numascope.topology.hwloc_xml) as plain NodeFigures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numascope.errors import UserError

if TYPE_CHECKING:
    from numascope.results.record import BenchResult
    from numascope.topology.hwloc_xml import NodeFigure


def matrix_figures(results: list[BenchResult]) -> list[NodeFigure]:
    """A run's node matrix as the topology layer's plain figures (`NodeFigure`s): validated
    matrix results with samples, each metric's median, in the results' order."""
    from numascope.topology.hwloc_xml import METRICS, NodeFigure
    out = []
    for r in results:
        if r.family != "matrix" or not r.validated:
            continue
        for metric in METRICS:
            m = r.metrics.get(metric)
            if m is not None and m.values:
                out.append(NodeFigure(initiator=int(r.params["src"]),
                                      target=int(r.params["dst"]), metric=metric,
                                      value=m.median, source=f"run result {r.case}"))
    return out


def matrix_run(st: Any, spec: str | None) -> Any:
    """The run of `spec` in the open store `st` (one run, holding a matrix), else the latest
    run holding one."""
    if spec is not None:
        recs = st.load([spec])
        if len(recs) != 1:
            raise UserError(f"--from-run {spec} selects {len(recs)} runs: give one")
        if not any(r.family == "matrix" for r in recs[0].results):
            raise UserError(f"run {recs[0].run_id} holds no node matrix")
        return recs[0]
    for summary in reversed(st.list_runs()):
        rec = st.get_run(summary.run_id)
        if any(r.family == "matrix" for r in rec.results):
            return rec
    raise UserError("no stored run holds a node matrix (numascope run stores one)")


def write_matrix_xml(topo: Any, store: str | None, from_run: str | None, path: str,
                     sysfs_root: str) -> tuple[Any, list, int]:
    """Write hwloc's XML of `topo` with the chosen run's matrix to `path`: (the run, the
    memory attributes written, how many firmware (HMAT) values they replaced). A run of
    another machine is refused; one without a topology digest is warned of."""
    from numascope.console import warn
    from numascope.results.run import topology_digest
    from numascope.results.store import Store
    from numascope.topology.hwloc_xml import tools, write_xml

    tools()   # missing hwloc: say so before reading the store
    with Store.open(store) as st:
        rec = matrix_run(st, from_run)
    digest = rec.host.get("topology_digest")
    if digest is None:
        warn(f"run {rec.run_id} records no topology digest: cannot check it was measured "
             "on this machine")
    elif digest != topology_digest(topo):
        raise UserError(f"run {rec.run_id} was measured on another machine (its topology "
                        "differs from this one's; --sysfs-root replays the machine it came "
                        "from)")
    try:
        attrs, replaced = write_xml(topo, matrix_figures(rec.results), path, sysfs_root)
    except OSError as e:   # checked before, yet the disk may still refuse (full, removed)
        from numascope.errors import escape_text
        raise UserError(f"--hwloc-xml {escape_text(path)}: cannot write it "
                        f"({e.strerror or type(e).__name__})") from None
    return rec, attrs, replaced
