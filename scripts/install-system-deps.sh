#!/usr/bin/env bash
# Install the Debian packages numascope builds with and cross-checks against, when missing.
# Required: a C compiler, pkg-config, Python headers and venv. Optional (their tests and
# stages skip cleanly without them): hwloc, likwid, hpcc, fio, chromium, dmidecode, numactl.
#
#   install-system-deps.sh          what `make run` needs
#   install-system-deps.sh --vm     also what the multi-node tests (tests/numa) boot: QEMU,
#                                   a Debian kernel image with its modules, busybox for the
#                                   guest's initramfs. `make test` asks for it; `make run`
#                                   never installs a kernel on the machine it measures.
set -euo pipefail

required=(gcc pkg-config)
# libopenblas0-pthread: Debian's hpcc links libblas.so.3 through alternatives; without an
# optimized BLAS behind it, its HPL measures the reference BLAS, not the machine.
optional=(hwloc likwid hpcc libopenblas0-pthread fio chromium dmidecode numactl)
if [ "${1:-}" = "--vm" ]; then
  optional+=(qemu-system-x86 linux-image-amd64 busybox-static)
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

[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "numascope: please install: ${missing[*]} (no apt-get here)" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
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
