"""The interconnect family: its measurement (bench), its command, its figures."""
