"""The bandwidth family: its measurement (bench), its command, its figures."""
