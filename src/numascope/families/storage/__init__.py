"""The storage family: its measurement (bench), its command, its figures."""
