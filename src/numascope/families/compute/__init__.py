"""The compute family: its measurement (bench), its command, its figures."""
