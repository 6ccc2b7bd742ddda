"""Surface rows for the commands that read the results store: runs, show, compare, export,
report (see tests/surface.py). "{store}" holds two runs tagged nps=0 and nps=1."""

from surface import Bad

S = ["--store", "{store}"]
LONG = "x" * 201               # one past the longest run selection or tag taken (200)

BAD = [
    # runs
    Bad(["runs", "--store", "/nonexistent/dir/x.db"], 2, "no store at", "reading a missing store"),
    Bad(["runs", "--store", "{tmp}"], 2, "is a directory", "store that is a folder"),
    Bad(["runs", "--store", "/dev/null"], 2, "is not a regular file", "store that is a device"),
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
    Bad(["compare", "nps=0", "nps=1", "--metric", "latency_p9999", *S], 2,
        "no metric 'latency_p9999' in these runs; metrics: ", "unknown metric"),
    Bad(["compare", "nps=0", "nps=1", "--metric", "bandwidth", "--all-metrics", *S], 2,
        "not allowed with argument", "two ways to choose the metrics"),
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
    Bad(["export", "nps=0", "nps=1", "-o", "{tmp}/m.yml", *S], 2,
        "a kerncraft machine file describes one run", "kerncraft: two runs"),
    Bad(["export", "latest", "-o", "{tmp}/x.json", "--base", "{tmp}/b.yml", *S], 2,
        "--base is for --format kerncraft", "kerncraft: --base with JSON"),
    Bad(["export", "latest", "-o", "/nonexistent/m.yml", *S], 2,
        "folder /nonexistent does not exist", "kerncraft: missing folder"),
    # report
    Bad(["report", "latest", "-o", "/nonexistent/x.html", *S], 2,
        "folder /nonexistent does not exist", "missing folder"),
    Bad(["report", "latest", "-o", "{tmp}/x.pdf", *S], 2, "must end in .html", "not HTML"),
    Bad(["report", "nosuch", "-o", "{tmp}/x.html", *S], 2, "no run matches", "unknown run"),
    # empty values are errors, never "not given"
    Bad(["runs", "--store", ""], 2, "--store is empty", "empty store path"),
    Bad(["runs", "--store", " "], 2, "--store is empty", "blank store path"),
    Bad(["runs", "--tag", "", *S], 2, "--tag is empty", "empty tag filter"),
    Bad(["show", "latest", "--store", ""], 2, "--store is empty", "show: empty store"),
    Bad(["show", "", *S], 2, "empty run selection", "show: empty run"),
    Bad(["compare", "nps=0", "", *S], 2, "empty run selection", "compare: empty side"),
    Bad(["compare", "nps=0", "nps=1", "--family", "", *S], 2, "--family is empty",
        "compare: empty family"),
    Bad(["compare", "nps=0", "nps=1", "--store", ""], 2, "--store is empty",
        "compare: empty store"),
    Bad(["export", "latest", "-o", "", *S], 2, "--output is empty", "export: empty output"),
    Bad(["export", "latest", "-o", "{tmp}/x.json", "--store", ""], 2, "--store is empty",
        "export: empty store"),
    Bad(["report", "latest", "-o", "", *S], 2, "--output is empty", "report: empty output"),
    Bad(["report", "latest", "-o", "{tmp}/r.html", "--store", ""], 2, "--store is empty",
        "report: empty store"),
    # output paths: every command says them the same way, before the store is read
    Bad(["export", "latest", "-o", "{tmp}", *S], 2, "is a folder",
        "export: a folder, no --format"),
    Bad(["export", "latest", "-o", "/proc/x.json", *S], 2, "--output /proc/x.json:",
        "export: on /proc"),
    Bad(["export", "latest", "-o", "{tmp}/" + "n" * 300 + ".json", *S], 2, "--output",
        "export: a name too long"),
    Bad(["report", "latest", "-o", "{tmp}", *S], 2, "is a folder", "report: a folder"),
    Bad(["report", "latest", "-o", "/proc/r.html", *S], 2, "--output /proc/r.html:",
        "report: on /proc"),
    Bad(["report", "latest", "-o", "{tmp}/" + "n" * 300 + ".html", *S], 2, "--output",
        "report: a name too long"),
    # names have bounds; what the user typed is shown escaped, on one line
    Bad(["show", LONG, *S], 2, "at most 200 characters", "show: a 201-character run"),
    Bad(["compare", "nps=0", "x" * 5000, *S], 2, "at most 200 characters",
        "compare: a 5,000-character side"),
    Bad(["export", LONG, "-o", "{tmp}/x.json", *S], 2, "at most 200 characters",
        "export: a long run"),
    Bad(["report", LONG, "-o", "{tmp}/x.html", *S], 2, "at most 200 characters",
        "report: a long run"),
    Bad(["runs", "--tag", "k=" + LONG, *S], 2, "a tag is at most 200 characters",
        "runs: a long tag"),
    Bad(["show", "a\x1b[31mb\nc", *S], 2,
        "no run matches 'a\\x1b[31mb\\nc'", "show: escape and newline shown escaped"),
    Bad(["runs", "--tag", "k=\x1b[2J", *S], 2, "control characters", "runs: ESC in a tag"),
]

JSON = [
    ["runs", *S],
    ["runs", "--tag", "nps=7", *S],
    ["show", "latest", *S],
    ["compare", "nps=0", "nps=1", *S],
    ["compare", "nps=0", "nps=1", "--family", "bandwidth", "--all-metrics", *S],
    ["compare", "nps=0", "nps=1", "--metric", "bandwidth", *S],
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
