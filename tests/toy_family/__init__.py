"""A toy family as a folder, the way every family of numascope is one
(src/numascope/families/<name>/): its options, its measurement, its command, its figures,
its headline, and where it stands in the report and the fleet check. It lives in the
tests, and one line adds it: `families.add_folder("toy_family", "Toy")`."""

ORDER = 45                          # its section and headline lines after compute's
SECTION = ("toy", "Toy sums")      # the report section that holds its tables
TOLERANCE_PCT = 30                 # the loss a fleet check allows it by default
