"""Surface rows for `numascope run` (see tests/surface.py). Every bad input here is refused
before anything is measured or stored."""

from surface import Bad

S = ["--store", "{store}"]

BAD = [
    Bad(["run", "--stage", "nosuch", *S], 2, "unknown stage 'nosuch'", "unknown stage"),
    Bad(["run", "--stage", "", *S], 2, "--stage is empty", "empty stage"),
    Bad(["run", "--tag", "", *S], 2, "--tag is empty", "empty tag"),
    Bad(["run", "--report", "", *S], 2, "--report is empty", "empty report path"),
    Bad(["run", "--store", ""], 2, "--store is empty", "empty store path"),
    Bad(["run", "--tag", "k=" + "v" * 199, *S], 2, "a tag is at most 200 characters",
        "a 201-character tag"),
    Bad(["run", "--report", "{tmp}", *S], 2, "is a folder", "report path is a folder"),
    Bad(["run", "--tag", "a", *S], 2, "expected KEY=VALUE", "tag without '='"),
    Bad(["run", "--tag", "=x", *S], 2, "expected KEY=VALUE", "tag without a key"),
    Bad(["run", "--tag", " =x", *S], 2, "expected KEY=VALUE", "whitespace-only key"),
    Bad(["run", "--tag", "a= ", *S], 2, "give a value", "whitespace-only value"),
    Bad(["run", "--tag", "a=1", "--tag", "a=2", *S], 2, "given twice", "repeated key"),
    Bad(["run", "--tag", "a=b\nc", *S], 2, "control characters", "newline in a tag"),
    Bad(["run", "--tag", "a\tb=c", *S], 2, "control characters", "tab in a key"),
    Bad(["run", "--tag", "a=1,b=2", *S], 2, "',' separates tags", "comma in a tag"),
    Bad(["run", "--tag", "a,b=1", *S], 2, "',' separates tags", "comma in a key"),
    Bad(["run", "--report", "/nonexistent/r.html", *S], 2, "folder /nonexistent does not "
        "exist", "report in a missing folder"),
    Bad(["run", "--report", "{tmp}/r.txt", *S], 2, "must end in .html",
        "report that is not HTML"),
    Bad(["run", "--report", "-", *S], 2, "the report is a file", "report to stdout"),
    Bad(["run", "--report", "{tmp}/r.html", "--no-report", *S], 2, "not allowed with",
        "--report and --no-report"),
    Bad(["run", "--quick", "--full", *S], 2, "not allowed with", "two profiles"),
    Bad(["run", "--smoke", "--full", *S], 2, "not allowed with", "smoke and full"),
    Bad(["run", "--stage", "storage", "--io-dir", "{tmp}/nope", *S], 2,
        "/nope: no such directory", "missing --io-dir"),
    Bad(["run", "--stage", "topology", "--io-dir", "{tmp}/nope", *S], 2,
        "/nope: no such directory", "missing --io-dir, storage stage not asked"),
    Bad(["run", "--stage", "storage", "--io-dir", "{tmp}", "--io-dir", "{tmp}/", *S], 2,
        "is named twice", "one --io-dir twice"),
    Bad(["run", "--stage", "bandwidth", "--io-dir", "{tmp}", *S], 2,
        "--io-dir is for the storage stage, which --stage leaves out",
        "a good --io-dir, storage stage not asked"),
    Bad(["run", "--stage", "topology", "--memory", "12x DDR9-4800", *S], 2,
        "unknown memory type DDR9", "run --memory of an unknown type"),
    Bad(["run", "--stage", "topology", "--memory", "", *S], 2, "--memory is empty",
        "empty run --memory"),
    Bad(["run", "--stage", "topology", "--links", "xgmi:4x16", *S], 2,
        "expected [NAME:]LINKSxLANES@GBPS", "run --links without a rate"),
    Bad(["run", "--stage", "topology", "--no-report", "--store", "/proc/x.db"], 2,
        "cannot create the store /proc/x.db", "store where no file can be made"),
    Bad(["run", "--stage", "topology", "--no-report", "--store", "/nonexistent/x.db"], 2,
        "folder /nonexistent does not exist", "store in a missing folder"),
    Bad(["run", "--stage", "topology", "--no-report", "--store", "{tmp}"], 2,
        "is a directory", "store that is a folder"),
]

JSON = [
    ["run", "--list-stages"],
]

WIDE = [
    ["run", "--list-stages"],
]
