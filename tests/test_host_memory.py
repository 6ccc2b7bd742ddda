"""Host.node_free: what an allocation on a node can have, page cache included."""

from pathlib import Path

from numascope.host import Host


def _tree(tmp_path: Path, system: dict[str, int], nodes: dict[int, dict[str, int]]) -> Host:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text(
        "".join(f"{k}: {v} kB\n" for k, v in system.items()))
    for n, fields in nodes.items():
        d = tmp_path / f"sys/devices/system/node/node{n}"
        d.mkdir(parents=True)
        (d / "meminfo").write_text("".join(f"Node {n} {k}: {v} kB\n" for k, v in fields.items()))
    return Host(tmp_path)


GiB = 1 << 20   # in kB


def test_one_node_is_the_machines_memavailable(tmp_path):
    # a page cache of 18 GiB: MemFree says 4 GiB, the kernel would give 22
    h = _tree(tmp_path, {"MemFree": 4 * GiB, "MemAvailable": 22 * GiB},
              {0: {"MemFree": 4 * GiB, "Active(file)": 9 * GiB, "Inactive(file)": 9 * GiB}})
    assert h.node_free(0) == 22 * GiB * 1024


def test_several_nodes_share_the_reclaimable_memory_by_their_cache(tmp_path):
    h = _tree(tmp_path, {"MemFree": 6 * GiB, "MemAvailable": 18 * GiB},
              {0: {"MemFree": 2 * GiB, "Active(file)": 6 * GiB, "Inactive(file)": 3 * GiB},
               1: {"MemFree": 4 * GiB, "Inactive(file)": 2 * GiB, "SReclaimable": 1 * GiB}})
    # 12 GiB reclaimable on the machine, 9 of them on node 0, 3 on node 1
    assert h.node_free(0) == (2 + 9) * GiB * 1024
    assert h.node_free(1) == (4 + 3) * GiB * 1024
    assert h.free_for([0, 1])[0] == 18 * GiB * 1024


def test_without_memavailable_a_node_has_its_memfree(tmp_path):
    h = _tree(tmp_path, {"MemFree": 6 * GiB},
              {0: {"MemFree": 2 * GiB}, 1: {"MemFree": 4 * GiB}})
    assert h.node_free(1) == 4 * GiB * 1024
    assert h.node_free(2) is None
