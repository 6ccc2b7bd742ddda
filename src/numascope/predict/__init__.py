"""Predict, then verify: what memory bandwidth (and latency) each rank of a job shape gets
from a stored run's measurements (model), and the same shape run for real (verify)."""
