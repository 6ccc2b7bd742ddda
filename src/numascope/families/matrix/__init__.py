"""The matrix family: its measurement (bench), its command, its figures."""
