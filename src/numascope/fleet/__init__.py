"""Fleet mode (`numascope fleet`): screen every node of a cluster through the cluster's own
launcher (srun, mpirun), gather the records into one store, find the outliers.

- node.py      who this node is (host name, Slurm ids), one node's suite, failure records
- mpi.py       coordination over MPI (mpi4py, imported lazily): rank 0 gathers and stores
- files.py     without MPI: one record file per node in a shared folder, and `gather`
- verdict.py   one truth per node: complete only when every stage asked ran and passed
- manifest.py  every node written down first (placeholders "missing"), a shared folder's manifest
- keep.py      rank 0's store: placeholders replaced, checkpoints, a full disk never loses a record
- outliers.py  grouping by configuration, practical gap, DRAM floor, shape; the verdicts
- screen.py    the statistics: moderated t per metric (spread borrowed across groups),
               evidence per family, false-discovery rule
- special.py   digamma, trigamma, the normal and Student's t tails (standard library)
- load.py      a fleet's runs read with only what the analysis needs (not whole records)
- baseline.py  named baselines (group medians) kept in the store, and checks against them
- prom.py      node_exporter textfile exposition
- kubernetes.py  node-feature-discovery labels (a features.d file) from a run and its check
"""
