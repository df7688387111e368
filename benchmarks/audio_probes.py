"""Benchmark of the audio probes ``masked`` and ``lift`` on the bundled offline models.

Builds a corpus of number sentences spoken by offline TTS voices (flite ``slt`` / ``kal16``,
espeak-ng ``en-us+f3``; cached by :mod:`asr_audit.audio.voices`), runs masked-number recovery
(silence) and the masked-number audio lift in a fresh store, and reports per model:

* recovery: eligible items, accept-ref with its Wilson interval, items gated out;
* lift: mean lift of the hidden number given the unmasked clip and given the masked clip, and
  the paired difference (sentence-clustered bootstrap);
* cost: backend forward passes per probe item (counted at the backend: one decoded clip or one
  scored row is one pass), items per second of wall time, and the same run again from the store.

Run::

    python benchmarks/audio_probes.py --json /tmp/audio_probes.json
    python benchmarks/audio_probes.py --masked-models whisper-tiny.en --lift-models whisper-tiny.en-pt --voices flite-slt
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SENTENCES = (
    "The bridge was finished in 2011 after years of delay.",
    "She paid 45 dollars for the old wooden chair.",
    "About 300 people came to the meeting on Tuesday.",
    "The train leaves from platform 7 every morning.",
    "My grandmother was born in 1948 in a small village.",
    "We counted 64 birds on the lake yesterday.",
    "The report has 250 pages and nobody read it.",
    "Prices rose by 15 percent during the winter.",
    "The museum received 12 paintings from a private collector.",
    "Our team scored 38 points in the second half.",
)


class Counting:
    """Proxy counting the clips a backend transcribes and the rows it scores."""

    def __init__(self, backend: Any) -> None:
        self._b, self.passes = backend, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)

    def transcribe(self, audios: Any) -> list[str]:
        self.passes += len(audios)
        return self._b.transcribe(audios)

    def score(self, audios: Any, prefixes: Any, targets: Any) -> Any:
        self.passes += len(audios)
        return self._b.score(audios, prefixes, targets)


def build_corpus(folder: Path, voices: list[str]) -> Any:
    """Synthesize every sentence with every voice into a manifest corpus."""
    import soundfile as sf

    from asr_audit.audio.voices import synthesize
    from asr_audit.corpus.spec import load_corpus

    lines = []
    for v in voices:
        for i, text in enumerate(SENTENCES):
            x, sr = synthesize(v, text)
            name = f"{v}-{i:02d}.flac"
            sf.write(folder / name, x, sr)
            lines.append(json.dumps({"audio_filepath": name, "text": text, "speaker": v}))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return load_corpus(folder / "manifest.jsonl")


def bench(corpus: Any, masked_models: list[str], lift_models: list[str], store_path: Path) -> dict[str, Any]:
    from asr_audit.align import get_aligner
    from asr_audit.align.run import align_corpus
    from asr_audit.models.base import load_backend
    from asr_audit.probes.audio.lift import run_lift
    from asr_audit.probes.audio.masked import MaskParams, run_masked
    from asr_audit.probes.core.models import LocalModel, LocalPool
    from asr_audit.store.sqlite import Store

    out: dict[str, Any] = {"n_clips": len(corpus), "masked": [], "lift": []}
    aligner = get_aligner("sphinx")
    with Store(store_path) as st:
        t0 = time.perf_counter()
        failed = [a.clip_id for a in align_corpus(aligner, list(corpus), st) if not a.ok]
        out["align_seconds"] = time.perf_counter() - t0
        out["align_failures"] = failed
        for spec in masked_models:
            b = Counting(load_backend(spec))
            runs = []
            for _ in range(2):  # cold, then from the store
                before, t0 = b.passes, time.perf_counter()
                res = run_masked(LocalPool.of([b]), corpus, st, MaskParams(), aligner=aligner)
                runs.append((time.perf_counter() - t0, b.passes - before))
            m, n_items = res.models[0], len(res.recipes)
            out["masked"].append(
                {
                    **m.to_dict(),
                    "model": spec,
                    "items": n_items,
                    "passes_per_item": runs[0][1] / max(n_items, 1),
                    "items_per_s": n_items / runs[0][0],
                    "items_per_s_cached": n_items / runs[1][0],
                    "passes_cached": runs[1][1],
                }
            )
        for spec in lift_models:
            b = Counting(load_backend(spec))
            t0 = time.perf_counter()
            res = run_lift([LocalModel.of(b)], corpus, st, "masked", aligner=aligner, n_resamples=1000)
            wall = time.perf_counter() - t0
            m = res.models[0]
            n_items = len({r.item_id for r in res.records})
            out["lift"].append(
                {
                    "model": spec,
                    "items": n_items,
                    "unmasked": m["conditions"].get("unmasked", {}).get("lift"),
                    "masked": m["conditions"].get("masked", {}).get("lift"),
                    "paired_unmasked_minus_masked": m["paired"].get("unmasked-masked"),
                    "passes_per_item": b.passes / max(n_items, 1),
                    "items_per_s": n_items / wall,
                    "forward_passes": b.passes,
                }
            )
    return out


def split(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--voices", default="flite-slt,flite-kal16,espeak-en-us-f3")
    ap.add_argument("--masked-models", default="whisper-tiny.en,whisper-base")
    ap.add_argument("--lift-models", default="whisper-tiny.en-pt,whisper-base-pt")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = build_corpus(Path(tmp), split(args.voices))
        result = bench(corpus, split(args.masked_models), split(args.lift_models), Path(tmp) / "store.sqlite3")
    result["voices"] = split(args.voices)
    text = json.dumps(result, indent=2, default=str)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    for m in result["masked"]:
        print(
            f"masked  {m['model']:<22} accept-ref {m['accept_ref']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}] "
            f"k/n {m['k']}/{m['n']} gated {m['n_gated_out']}  passes/item {m['passes_per_item']:.2f}  "
            f"items/s {m['items_per_s']:.2f} (cached {m['items_per_s_cached']:.1f})",
            file=sys.stderr,
        )
    for m in result["lift"]:
        un, ma, pd = m["unmasked"] or {}, m["masked"] or {}, m["paired_unmasked_minus_masked"] or {}
        print(
            f"lift    {m['model']:<22} unmasked {un.get('mean')}  masked {ma.get('mean')}  paired {pd.get('mean')} "
            f"[{pd.get('ci_low')}, {pd.get('ci_high')}]  passes/item {m['passes_per_item']:.2f}  "
            f"items/s {m['items_per_s']:.2f}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
