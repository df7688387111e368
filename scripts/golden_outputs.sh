#!/usr/bin/env bash
# Write every user-facing output (demo results, tables, CLI JSON/CSV) into one folder so two
# versions of asr-audit can be compared byte for byte:
#   bash scripts/golden_outputs.sh /tmp/before   # on the old commit
#   bash scripts/golden_outputs.sh /tmp/after    # on the new one
#   diff -r /tmp/before /tmp/after               # (run.json, store.sqlite and report.html excluded)
set -euo pipefail
out="${1:?usage: golden_outputs.sh OUT_DIR [--no-demo]}"
mkdir -p "$out"
vox="$(python3 -c 'import asr_audit.data, pathlib; print(pathlib.Path(asr_audit.data.__file__).parent / "voxpopuli")')"
a="asr-audit"
$a refdis --preds "$vox" --panel whisper-base.en,whisper-small.en,whisper-tiny.en,wav2vec2-base-960h --preset anchor --no-loo --json "$out/refdis-anchor-noloo.json" --csv "$out/refdis-anchor-noloo.csv" > "$out/refdis-anchor-noloo.txt"
$a refdis --preds "$vox" --panel whisper-base.en,whisper-small.en,whisper-tiny.en,wav2vec2-base-960h --preset anchor --json "$out/refdis-anchor-loo.json" --csv "$out/refdis-anchor-loo.csv" > "$out/refdis-anchor-loo.txt"
$a refdis --preds "$vox" --panel whisper-base.en,whisper-small.en,whisper-tiny.en,wav2vec2-base-960h --preset paper --json "$out/refdis-paper.json" --csv "$out/refdis-paper.csv" > "$out/refdis-paper.txt"
$a switch-rate --preds "$vox" --json "$out/switch.json" --csv "$out/switch.csv" > "$out/switch.txt"
$a coverage --preds "$vox" > "$out/coverage.txt"
if [ "${2:-}" != "--no-demo" ]; then
  $a demo --out "$out/demo" --no-progress > "$out/demo.txt"
  rm -f "$out/demo/run.json" "$out/demo/store.sqlite"* "$out/demo/report.html"
fi
