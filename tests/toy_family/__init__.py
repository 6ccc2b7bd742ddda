"""A toy family as a folder, the way every family of numascope is one
(src/numascope/families/<name>/): its options, its measurement, its command, its figures.
It lives in the tests, and one line adds it: `families.add_folder("toy_family", "Toy")`."""
