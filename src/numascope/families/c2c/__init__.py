"""The c2c family: its measurement (bench), its command, its figures."""
