#!/usr/bin/env bash
# Install everything plus the test dependencies, then run the full test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
python3 -m pip install -q -e ".[all,test,lint]"
python3 -m pytest -q "$@"
# The Ray tests (marker `ray`) start Ray, which binds this machine's own address unless it has
# none, so tests/conftest.py skips them above (on a machine with a network) and they run here, in a
# loopback-only network namespace (unshare from util-linux, ip from iproute2). Exit code 5 = no
# ray test among the arguments given.
NS="unshare -n"; [ "$(id -u)" -ne 0 ] && NS="unshare -rn"
[ "$#" -gt 0 ] || set -- tests/runner/test_ray_*.py  # where the ray tests live (collecting all tests is slow)
rc=0; $NS sh -c 'ip link set lo up && exec python3 -m pytest -q -m ray "$@"' sh "$@" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || exit "$rc"
