"""`numascope references`: the published figures (tests/test_references.py has the rest)."""

from surface import Bad

BAD = [
    Bad(["references", "--quantity", "triad"], 2, "--quantity 'triad' is not a quantity",
        "references: unknown quantity"),
    Bad(["references", "--table", "{tmp}/absent.csv"], 2, "cannot read the references table",
        "references: missing table"),
    Bad(["references", "--run", "nosuchrun", "--store", "{store}"], 2,
        "no run matches 'nosuchrun'", "references: unknown run"),
]

JSON = [
    ["references"],
    ["references", "--cpu", "7601", "--quantity", "triad_all_cores"],
]

WIDE = [
    ["references"],
    ["references", "--cpu", "rome"],
]
