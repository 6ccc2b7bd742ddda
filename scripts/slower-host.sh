#!/usr/bin/env bash
# Run a command as if on a slower host: every process it starts shares a CPU quota of
# SHARE x this machine's usable CPUs (a cgroup's cpu quota), so a 2-CPU machine at 0.6 runs
# it on 1.2 CPUs' worth of time: cores 40 % slower, as far as a CPU-bound suite can tell.
#
#   sudo bash scripts/slower-host.sh 0.6 make test      # the suite on "40 % slower" cores
#
# cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us); needs root to make the group. The group is
# removed afterwards; the command's exit status is this script's.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: slower-host.sh SHARE COMMAND..." >&2; exit 2; }
share=$1; shift
cpus=$(nproc)
quota=$(awk -v s="$share" -v c="$cpus" 'BEGIN { q = int(s * c * 100000); if (q < 1000 || s <= 0 || s > 1) exit 1; print q }') \
  || { echo "slower-host.sh: SHARE must be in (0, 1] (got $share)" >&2; exit 2; }
name="numascope-slower-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then            # cgroup v2
  dir=/sys/fs/cgroup/$name
  mkdir "$dir"
  echo "$quota 100000" > "$dir/cpu.max"
elif [ -d /sys/fs/cgroup/cpu ]; then                          # cgroup v1
  dir=/sys/fs/cgroup/cpu/$name
  mkdir "$dir"
  echo 100000 > "$dir/cpu.cfs_period_us"
  echo "$quota" > "$dir/cpu.cfs_quota_us"
else
  echo "slower-host.sh: no cgroup cpu controller here" >&2; exit 4
fi
cleanup() { for p in $(cat "$dir/cgroup.procs" 2>/dev/null); do echo "$p" > "$(dirname "$dir")/cgroup.procs" 2>/dev/null || true; done; rmdir "$dir" 2>/dev/null || true; }
trap cleanup EXIT
echo "slower-host.sh: $cpus CPUs at $share: a quota of $((quota / 1000)) ms per 100 ms" >&2
set +e
( echo $BASHPID > "$dir/cgroup.procs"; exec "$@" )
rc=$?
exit $rc
