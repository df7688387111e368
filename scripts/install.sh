#!/usr/bin/env bash
# Install asr-audit with every extra and the offline pieces it uses (run as root on Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  # real speech (LibriVox clips), TTS voices (espeak-ng also speaks es/fr/de for calib build --language),
  # sox, headless browser for the report test; unshare (util-linux) and ip (iproute2) run the Ray
  # tests in a loopback-only network namespace
  $SUDO apt-get install -y -qq \
    pocketsphinx-testdata flite espeak-ng festival festvox-us-slt-hts festvox-kallpc16k sox libsndfile1 chromium \
    util-linux iproute2 >/dev/null
fi
# the CPU build of PyTorch (a plain `torch` requirement would pull a multi-GB CUDA build)
python3 -m pip install -q "torch==2.13.0" || python3 -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu
python3 -m pip install -q -e ".[all]"
