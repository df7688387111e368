#!/usr/bin/env bash
# Lint, format check and type check (run by .ci/run after the tests; a new finding fails CI).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_python.sh  # PY: the interpreter scripts/install.sh used
"$PY" -m ruff check src tests benchmarks
"$PY" -m ruff format --check src tests benchmarks
"$PY" -m mypy  # src/asr_audit, tests and benchmarks ([tool.mypy] files in pyproject.toml)
