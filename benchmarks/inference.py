"""Inference overhead: the raw engine vs ``asr-audit transcribe`` on the same model, clips, batch size.

Measures, in one process:

* **raw** — soundfile + the Whisper log-mel + ``ctranslate2.models.Whisper.generate`` + tokenizer
  decode, written directly (no validation, hashing, store, files or progress display);
* **asr-audit, first run** — ``asr-audit transcribe`` into a fresh store (audio validation and
  hashing, SQLite writes, prediction files, WER, progress bar);
* **asr-audit, rerun** — the same command again: every transcript comes from the store.

Model loading is timed separately and excluded from both first-run figures, so the overhead is
the per-clip plumbing. Prints RTFx, the overhead ratio (target < 10 %) and the rerun time as a
share of the first run (target < 5 %). Identical transcripts are asserted.

    python benchmarks/inference.py [--model whisper-tiny.en] [--repeat 2] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np


def raw_engine(model_dir: Path, audio_files: list[Path], batch_size: int) -> tuple[list[str], float, float]:
    """Transcribe with CTranslate2 directly; returns (texts, load seconds, transcribe seconds)."""
    import ctranslate2
    import soundfile as sf
    import soxr
    import tokenizers

    from asr_audit.models.ct2 import mel_settings_for
    from asr_audit.models.whisper_features import batch_log_mel

    t0 = time.perf_counter()
    model = ctranslate2.models.Whisper(str(model_dir), device="cpu", compute_type="float32")
    tok = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    mel = mel_settings_for(model_dir)
    prompt = [tok.token_to_id("<|startoftranscript|>")]
    if model.is_multilingual:
        prompt += [tok.token_to_id("<|en|>"), tok.token_to_id("<|transcribe|>")]
    prompt.append(tok.token_to_id("<|notimestamps|>"))
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    texts = []
    for start in range(0, len(audio_files), batch_size):
        clips = []
        for f in audio_files[start : start + batch_size]:
            x, sr = sf.read(str(f), dtype="float32")
            clips.append(x if sr == 16000 else soxr.resample(x, sr, 16000).astype(np.float32))
        feats = ctranslate2.StorageView.from_array(np.ascontiguousarray(batch_log_mel(clips, mel)))
        res = model.generate(
            feats, [prompt] * len(clips), beam_size=1, max_length=448, suppress_blank=True, suppress_tokens=[-1]
        )
        texts += [tok.decode(r.sequences_ids[0], skip_special_tokens=True).strip() for r in res]
    return texts, t_load, time.perf_counter() - t0


def ours(model: str, manifest: Path, out: Path, store: Path, batch_size: int) -> tuple[dict[str, str], float, float]:
    """``asr-audit transcribe`` in-process; returns (texts by clip id, load seconds, transcribe seconds)."""
    from asr_audit.corpus.spec import load_corpus
    from asr_audit.models.base import load_backend
    from asr_audit.store.export import write_predictions
    from asr_audit.store.sqlite import open_store
    from asr_audit.store.transcribe import transcribe_corpus

    t0 = time.perf_counter()
    backend = load_backend(model)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    corpus = load_corpus(manifest)
    with open_store(store) as st:
        outcome = transcribe_corpus(backend, corpus, st, batch_size=batch_size)
    write_predictions(out / "preds.jsonl", outcome.records)
    elapsed = time.perf_counter() - t0
    return {r.clip_id: r.hypothesis for r in outcome.records}, t_load, elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="whisper-tiny.en", choices=["whisper-tiny.en", "whisper-base"])
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="copies of the 5 LibriVox clips (each copy re-encoded "
        "with a tiny gain change so the store sees distinct audio)",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import soundfile as sf

    from asr_audit.data import LIBRIVOX_MANIFEST
    from asr_audit.models.bundled import bundled_model_dir

    work = Path(tempfile.mkdtemp(prefix="asr-audit-bench-"))
    rows = [json.loads(line) for line in LIBRIVOX_MANIFEST.read_text().splitlines() if line.strip()]
    files, manifest_rows, seconds = [], [], 0.0
    for k in range(args.repeat):
        for r in rows:
            x, sr = sf.read(str(LIBRIVOX_MANIFEST.parent / r["audio_filepath"]), dtype="float32")
            x = x * (1.0 - 1e-3 * k)  # distinct audio per copy
            f = work / f"{k}-{r['audio_filepath'].replace('.flac', '.wav')}"
            sf.write(str(f), x, sr, subtype="FLOAT")
            files.append(f)
            seconds += len(x) / sr
            manifest_rows.append({"audio_filepath": str(f), "id": f.stem, "text": r["text"], "duration": len(x) / sr})
    manifest = work / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(m) + "\n" for m in manifest_rows))
    model_dir = bundled_model_dir(args.model)

    raw_texts, raw_load, raw_s = raw_engine(model_dir, files, args.batch_size)
    texts1, our_load, first_s = ours(args.model, manifest, work, work / "store.sqlite", args.batch_size)
    texts2, _, rerun_s = ours(args.model, manifest, work, work / "store.sqlite", args.batch_size)
    by_file = dict(zip([f.stem for f in files], raw_texts))
    same = all(texts1[k] == by_file[k] for k in by_file) and texts1 == texts2
    result = {
        "model": args.model,
        "clips": len(files),
        "audio_seconds": round(seconds, 2),
        "batch_size": args.batch_size,
        "load_seconds": {"raw": round(raw_load, 2), "asr_audit": round(our_load, 2)},
        "raw_seconds": round(raw_s, 3),
        "first_run_seconds": round(first_s, 3),
        "rerun_seconds": round(rerun_s, 3),
        "rtfx_raw": round(seconds / raw_s, 2),
        "rtfx_asr_audit": round(seconds / first_s, 2),
        "overhead": round(first_s / raw_s - 1, 4),
        "rerun_share": round(rerun_s / first_s, 4),
        "identical_transcripts": same,
    }
    print(f"{args.model}: {len(files)} clips, {seconds:.1f} s of audio, batch {args.batch_size}")
    print(f"  raw engine      {raw_s:7.2f} s   RTFx {seconds / raw_s:6.1f}")
    print(
        f"  asr-audit       {first_s:7.2f} s   RTFx {seconds / first_s:6.1f}   overhead {100 * (first_s / raw_s - 1):+.1f}% (target < 10%)"
    )
    print(f"  rerun (cached)  {rerun_s:7.3f} s   {100 * rerun_s / first_s:.2f}% of the first run (target < 5%)")
    print(f"  identical transcripts: {same}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if not same:
        raise SystemExit("transcripts differ between the raw engine and asr-audit")


if __name__ == "__main__":
    main()
