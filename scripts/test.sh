#!/usr/bin/env bash
# Install everything plus the test dependencies, then run the full test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
python3 -m pip install -q -e ".[all,test,lint]"
python3 -m pytest -q "$@"
