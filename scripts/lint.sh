#!/usr/bin/env bash
# Lint, format check and type check (run by .ci/run after the tests; a new finding fails CI).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check src tests benchmarks
python3 -m ruff format --check src tests benchmarks
python3 -m mypy
