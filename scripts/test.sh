#!/usr/bin/env bash
# Install everything plus the test dependencies, then run the full test suite, then the Ray tests.
# Both parts always run; each one's exit code is reported and the script fails if either failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
. scripts/_python.sh  # PY: the interpreter the install used
"$PY" -m pip install -q --disable-pip-version-check -e ".[all,test,lint]"
# two pytest-xdist workers, each on one core with one math thread and its own cache folder
# (tests/conftest.py); an -n given in the arguments wins (-n 0: one process)
rc_main=0; "$PY" -m pytest -q -n 2 "$@" || rc_main=$?
# The Ray tests (marker `ray`) start Ray, which binds this machine's own address unless it has
# none, so tests/conftest.py skips them above (on a machine with a network) and they run here, in a
# loopback-only network namespace (unshare from util-linux, ip from iproute2). Exit code 5 = no
# ray test among the arguments given.
NS="unshare -n"; [ "$(id -u)" -ne 0 ] && NS="unshare -rn"
[ "$#" -gt 0 ] || set -- tests/runner/test_ray_*.py  # where the ray tests live (collecting all tests is slow)
rc_ray=0; $NS sh -c 'ip link set lo up && exec "$0" -m pytest -q -m ray "$@"' "$PY" "$@" || rc_ray=$?
[ "$rc_ray" -ne 5 ] || rc_ray=0
echo "scripts/test.sh: test suite exit code $rc_main, Ray tests exit code $rc_ray"
[ "$rc_main" -eq 0 ] && [ "$rc_ray" -eq 0 ]
