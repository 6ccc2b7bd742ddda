"""Surface rows for `numascope topo` (see tests/surface.py)."""

from surface import Bad

BAD = [
    Bad(["topo", "--sysfs-root", "/dev/null"], 2, "not a directory or a tar archive",
        "a device as the root"),
    Bad(["topo", "--sysfs-root", "/nonexistent"], 2, "no such file or directory",
        "missing root"),
    Bad(["topo", "--sysfs-root", "{tmp}"], 2, "no sys/ directory found", "empty folder"),
    Bad(["topo", "--sysfs-root", "{store}"], 2, "not a directory or a tar archive",
        "a database as the root"),
    Bad(["topo", "--sysfs-root", ""], 2, "--sysfs-root is empty", "empty root"),
    Bad(["topo", "--hwloc-xml", "/nonexistent/x.xml", "--store", "{store}"], 2,
        "folder /nonexistent does not exist", "XML in a missing folder"),
    Bad(["topo", "--hwloc-xml", "{tmp}/x.txt", "--store", "{store}"], 2, "must end in .xml",
        "XML file not named .xml"),
    Bad(["topo", "--hwloc-xml", ""], 2, "--hwloc-xml is empty", "empty XML path"),
    Bad(["topo", "--hwloc-xml", " "], 2, "--hwloc-xml is empty", "blank XML path"),
    Bad(["topo", "--hwloc-xml", "/proc/t.xml", "--store", "{store}"], 2,
        "--hwloc-xml /proc/t.xml:", "XML on /proc"),
    Bad(["topo", "--hwloc-xml", "{tmp}", "--store", "{store}"], 2, "is a folder",
        "XML path is a folder"),
    Bad(["topo", "--hwloc-xml", "{tmp}/" + "t" * 300 + ".xml", "--store", "{store}"], 2,
        "--hwloc-xml", "XML name too long"),
    Bad(["topo", "--hwloc-xml", "{tmp}/t.xml", "--from-run", "", "--store", "{store}"], 2,
        "--from-run is empty", "empty --from-run"),
    Bad(["topo", "--hwloc-xml", "{tmp}/t.xml", "--store", ""], 2, "--store is empty",
        "empty store"),
    Bad(["topo", "--from-run", "", "--store", "{store}"], 2,
        "--from-run is empty", "empty --from-run without --hwloc-xml"),
    Bad(["topo", "--from-run", "nosuch", "--store", "{store}"], 2,
        "--from-run names the run --hwloc-xml exports", "--from-run without --hwloc-xml"),
]

JSON = [
    ["topo"],
]

WIDE = [
    ["topo"],
]
