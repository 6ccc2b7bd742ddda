"""Surface rows for the commands that read the results store: runs, show, compare, export,
report (see tests/surface.py). "{store}" holds two runs tagged nps=0 and nps=1."""

from surface import Bad

S = ["--store", "{store}"]

BAD = [
    # runs
    Bad(["runs", "--store", "/nonexistent/dir/x.db"], 2, "no store at", "reading a missing store"),
    Bad(["runs", "--store", "{tmp}"], 2, "is a directory", "store that is a folder"),
    Bad(["runs", "--tag", "nps", *S], 2, "expected KEY=VALUE", "filter tag without '='"),
    # show
    Bad(["show", "nosuchrun", *S], 2, "no run matches 'nosuchrun'", "unknown run"),
    Bad(["show", "nps=9", *S], 2, "no stored run has tags", "no run with this tag"),
    Bad(["show", "latest", "--store", "{tmp}/missing.db"], 2, "no store at", "missing store"),
    # compare
    Bad(["compare", "nosuchA", "nosuchB", *S], 2, "no run matches 'nosuchA'", "unknown runs"),
    Bad(["compare", "nps=0", "nps=1", "--family", "nosuch", *S], 2,
        "unknown family 'nosuch'; families: bandwidth", "unknown family"),
    Bad(["compare", "nps=0", "nps=1", "--min-effect", "-1", *S], 2, "--min-effect must be",
        "negative effect"),
    Bad(["compare", "nps=0", "nps=1", "--min-effect", "nan", *S], 2, "--min-effect must be",
        "NaN effect"),
    Bad(["compare", "latest", "latest", *S], 2, "same runs", "one run on both sides"),
    # export
    Bad(["export", "latest", "-o", "{tmp}/x.unknownext", *S], 2, "names no format",
        "unknown extension"),
    Bad(["export", "latest", "-o", "{tmp}/x", *S], 2, "no extension names no format",
        "no extension"),
    Bad(["export", "latest", "-o", "/nonexistent/x.json", *S], 2,
        "folder /nonexistent does not exist", "missing folder"),
    Bad(["export", "nosuch", "-o", "{tmp}/x.json", *S], 2, "no run matches", "unknown run"),
    Bad(["export", "latest", "--format", "json", "-o", "{tmp}", *S], 2, "is a folder",
        "output is a folder"),
    Bad(["export", "latest", "--format", "parquet", "-o", "-", *S], 2, "Parquet is binary",
        "binary to standard output"),
    # report
    Bad(["report", "latest", "-o", "/nonexistent/x.html", *S], 2,
        "folder /nonexistent does not exist", "missing folder"),
    Bad(["report", "latest", "-o", "{tmp}/x.pdf", *S], 2, "must end in .html", "not HTML"),
    Bad(["report", "nosuch", "-o", "{tmp}/x.html", *S], 2, "no run matches", "unknown run"),
]

JSON = [
    ["runs", *S],
    ["runs", "--tag", "nps=7", *S],
    ["show", "latest", *S],
    ["compare", "nps=0", "nps=1", *S],
    ["compare", "nps=0", "nps=1", "--family", "bandwidth", "--all-metrics", *S],
    ["export", "latest", "-o", "-", *S],
    ["export", "nps=0", "-o", "{tmp}/runs.csv", *S],
    ["report", "latest", "-o", "{tmp}/r.html", *S],
]

WIDE = [
    ["runs", *S],
    ["show", "latest", *S],
    ["show", "latest", "--all-metrics", *S],
    ["compare", "nps=0", "nps=1", *S],
    ["compare", "nps=0", "nps=1", "--all-metrics", *S],
]
