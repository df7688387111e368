# Sourced by scripts/test.sh and scripts/lint.sh: PY is the interpreter scripts/install.sh
# installed into (recorded in ./.asr-audit-python), else python3 on PATH.
PY=python3
if [ -f .asr-audit-python ]; then
  PY="$(cat .asr-audit-python)"
  [ -x "$PY" ] || { echo "$PWD/.asr-audit-python names $PY, which is not there: rerun bash scripts/install.sh" >&2; exit 2; }
fi
