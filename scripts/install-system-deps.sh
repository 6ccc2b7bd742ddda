#!/usr/bin/env bash
# Install the Debian packages numascope builds with and cross-checks against, when missing.
# Required: a C compiler, pkg-config, Python headers and venv. Optional (their tests and
# stages skip cleanly without them): hwloc, likwid, hpcc, fio, chromium, dmidecode, numactl,
# Open MPI with its compiler wrapper (numascope net builds its MPI programs with mpicc).
#
#   install-system-deps.sh          what `make run` needs
#   install-system-deps.sh --vm     also what the multi-node tests (tests/numa) boot: QEMU,
#                                   a Debian kernel image with its modules, busybox for the
#                                   guest's initramfs. `make test` asks for it; `make run`
#                                   never installs a kernel on the machine it measures.
#                                   On Debian bookworm it also adds a second guest kernel,
#                                   >= 6.9 (MPOL_WEIGHTED_INTERLEAVE), from bookworm-backports
#                                   (see newer_guest_kernel below); without it only the tests
#                                   that need it skip.
#   install-system-deps.sh --slurm  also Slurm and munge, for the tests that start a
#                                   single-host Slurm (slurmctld + slurmd) and srun through it,
#                                   and Prometheus for its promtool (`promtool check metrics`
#                                   on fleet prom's files; the server it would start is
#                                   stopped and disabled) (options combine: --vm --slurm)
set -euo pipefail

vm="" slurm=""
for a in "$@"; do
  case "$a" in
    --vm) vm=1 ;;
    --slurm) slurm=1 ;;
    *) echo "install-system-deps.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

required=(gcc pkg-config)
# libopenblas0-pthread: Debian's hpcc links libblas.so.3 through alternatives; without an
# optimized BLAS behind it, its HPL measures the reference BLAS, not the machine.
optional=(hwloc likwid hpcc libopenblas0-pthread fio chromium dmidecode numactl
          openmpi-bin libopenmpi-dev)
if [ -n "$vm" ]; then
  optional+=(qemu-system-x86 linux-image-amd64 busybox-static)
fi
if [ -n "$slurm" ]; then
  optional+=(slurm-wlm munge prometheus)
fi

python_ok() {  # headers for the extension, and a working venv module
  python3 - <<'PY' 2>/dev/null
import os, sysconfig, venv, ensurepip
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
PY
}

missing=()
for p in "${required[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
python_ok || missing+=(python3-dev python3-venv)

# A kernel >= 6.9 with its modules (9p: virtme-ng's root file system) for the guests that
# check the kernel's weighted interleave; the distribution's own kernel stays the default.
have_newer_kernel() {
  local d v maj min
  for d in /lib/modules/*/kernel/fs/9p; do
    [ -d "$d" ] || continue
    v=${d#/lib/modules/}; v=${v%%/*}
    maj=${v%%.*}; min=${v#*.}; min=${min%%[!0-9]*}
    [ -r "/boot/vmlinuz-$v" ] && [[ $maj =~ ^[0-9]+$ && $min =~ ^[0-9]+$ ]] \
      && { [ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "$min" -ge 9 ]; }; } && return 0
  done
  return 1
}

# Debian bookworm ships 6.1; bookworm-backports has 6.12. Its apt source is added in a file
# of its own (backports are pinned at priority 100: nothing else is upgraded from it), and
# one specific linux-image-6.12.*-amd64 package is installed from it, not the
# linux-image-amd64 meta-package (the machine's default kernel does not change). Tried at
# most once a day when it fails; a failure never fails this script.
newer_guest_kernel() {
  have_newer_kernel && return 0
  local codename="" list=/etc/apt/sources.list.d/numascope-bookworm-backports.list
  local tried=/var/lib/apt/lists/partial/.numascope-backports-tried pkg
  [ -r /etc/os-release ] && codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [ "$codename" != bookworm ] || ! command -v apt-get >/dev/null; then
    echo "numascope: no guest kernel >= 6.9 in /boot (this is not Debian bookworm: install" \
         "one from your distribution); the weighted-interleave guest tests will skip" >&2
    return 0
  fi
  if [ -e "$tried" ] && [ -z "$(find "$tried" -mmin +1440 2>/dev/null)" ]; then
    return 0   # failed less than a day ago: the tests say why they skip
  fi
  echo "numascope: installing a guest kernel >= 6.9 from bookworm-backports" >&2
  export DEBIAN_FRONTEND=noninteractive
  [ -e "$list" ] || echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "http://deb.debian.org/debian bookworm-backports main" | $SUDO tee "$list" >/dev/null
  if $SUDO apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
       -o APT::Get::List-Cleanup=0 >/dev/null 2>&1 \
     && pkg=$(apt-cache pkgnames linux-image-6.12. \
              | grep -E '^linux-image-6\.12\.[0-9a-z.+~]*-amd64$' | sort -V | tail -n 1) \
     && [ -n "$pkg" ] \
     && $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports "$pkg" \
          >/dev/null 2>&1 \
     && have_newer_kernel; then
    echo "numascope: installed $pkg for the guests" >&2
    $SUDO rm -f "$tried"
  else
    $SUDO touch "$tried" 2>/dev/null || true
    echo "numascope: could not install a linux-image-6.12 kernel from bookworm-backports;" \
         "the weighted-interleave guest tests will skip" >&2
  fi
  return 0
}

if [ ${#missing[@]} -eq 0 ]; then
  [ -n "$vm" ] && newer_guest_kernel
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "numascope: please install: ${missing[*]} (no apt-get here)" >&2
  exit 1
fi
echo "numascope: installing system packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
stamp=/var/lib/apt/lists/partial/.numascope-updated
if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
  $SUDO apt-get update -qq && $SUDO touch "$stamp" || true
fi
# Required ones must succeed; optional ones are tried one by one so one absent package
# (e.g. a distribution without likwid) does not block the rest.
$SUDO apt-get install -y -qq --no-install-recommends "${required[@]}" >/dev/null
for p in "${missing[@]}"; do
  $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
    || echo "numascope: could not install optional package $p; its checks will be skipped" >&2
done
# Debian's prometheus package is the only one with promtool; the tests want the tool, not
# a server listening on :9090
if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null \
   && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
[ -n "$vm" ] && newer_guest_kernel
exit 0
