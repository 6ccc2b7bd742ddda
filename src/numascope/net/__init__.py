"""MPI point-to-point programs for `numascope net`: the C source (built with mpicc at first
use) and the launcher (mpirun, one binding per rank, a timeout on every launch)."""
