"""The compress family: its measurement (bench), its command, its figures."""
