"""Batched inference: each backend's RTFx against its raw engine on the same batches.

For every model spec (default: the bundled ``whisper-tiny.en`` served by CTranslate2 and its
PyTorch rebuild ``whisper-tiny.en-pt``; add ``hf:<id>`` / ``hf-ctc:<id>`` models you have), on
the same clips cut into the same length-sorted batches of ``--batch-size``:

* **raw** — the engine called directly, as a user of that engine would write it:
  ``ctranslate2.models.Whisper.generate`` on the Whisper log-mel (ct2), transformers'
  ``WhisperForConditionalGeneration.generate`` with greedy search (``hf:`` / ``-pt``), a
  ``AutoModelForCTC`` forward with the padding mask, argmax and ``batch_decode`` (``hf-ctc:``),
  each on the same device and in the same dtype as the backend;
* **backend** — the audit's backend object, ``backend.transcribe(batch)`` per batch (input
  checks, features, its own greedy loop, decoding);
* **pipeline** — ``transcribe_corpus`` into a fresh store: what ``asr-audit transcribe`` and
  ``asr-audit run`` do (audio hashing, cache lookups, SQLite writes, length-sorted batches).

RTFx = audio seconds / wall seconds (model loading excluded; one warm-up batch first; with
``--repeat R`` the fastest of R passes, which damps the noise of a shared machine). The CPU
seconds of the process (all threads) are printed beside: on a busy shared CPU they compare the
work done more fairly than wall time.
Prints the device and dtype, each RTFx, the pipeline's RTFx as a share of the raw engine's
(target on a GPU: >= 90 %), and how many transcripts the raw engine and the backend share
(transformers' own ``generate`` may differ from the backend's greedy loop on a few clips; the
backend's greedy decoding matches CTranslate2's token for token). Runs on the CPU too.

    python benchmarks/gpu.py --clips 10 --batch-size 4 --repeat 3
    python benchmarks/gpu.py --device cuda --clips 512 --batch-size 32 \
        --models whisper-tiny.en,whisper-tiny.en-pt,hf:openai/whisper-small.en,hf-ctc:facebook/wav2vec2-base-960h
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

RawFn = Callable[[list[np.ndarray]], list[str]]


def librivox_clips(n: int) -> tuple[list[np.ndarray], list[str]]:
    """``n`` clips cycled from the five bundled LibriVox clips, each copy with a tiny gain change
    (distinct audio, so the store computes every one)."""
    import soundfile as sf

    from asr_audit.data import LIBRIVOX_MANIFEST

    rows = [json.loads(line) for line in LIBRIVOX_MANIFEST.read_text().splitlines() if line.strip()]
    base = []
    for r in rows:
        x, sr = sf.read(str(LIBRIVOX_MANIFEST.parent / r["audio_filepath"]), dtype="float32")
        assert sr == 16_000, sr
        base.append(x)
    clips = [(base[i % len(base)] * (1.0 - 1e-3 * (i // len(base)))).astype(np.float32) for i in range(n)]
    return clips, [f"clip{i:05d}" for i in range(n)]


def raw_ct2(backend: Any) -> RawFn:
    """CTranslate2 Whisper called directly, with the backend's resolved device and compute type."""
    import ctranslate2
    import tokenizers

    from asr_audit.models.whisper_features import batch_log_mel

    kind, _, index = backend.device.partition(":")
    model = ctranslate2.models.Whisper(
        str(backend.model_dir), device=kind, device_index=int(index or 0), compute_type=backend.compute_type
    )
    tok = tokenizers.Tokenizer.from_file(str(backend.model_dir / "tokenizer.json"))
    prompt = list(backend.prompt)

    def run(clips: list[np.ndarray]) -> list[str]:
        feats = ctranslate2.StorageView.from_array(np.ascontiguousarray(batch_log_mel(clips, backend.mel)))
        res = model.generate(
            feats, [prompt] * len(clips), beam_size=1, max_length=448, suppress_blank=True, suppress_tokens=[-1]
        )
        return [tok.decode(r.sequences_ids[0], skip_special_tokens=True).strip() for r in res]

    return run


def raw_torch_whisper(backend: Any) -> RawFn:
    """transformers' ``WhisperForConditionalGeneration.generate`` (greedy) on the same device and dtype."""
    import torch
    import transformers

    from asr_audit.models.whisper_torch import dtype_kwarg

    dtype = getattr(torch, backend.dtype)
    model = transformers.WhisperForConditionalGeneration.from_pretrained(str(backend.model_dir), **dtype_kwarg(dtype))
    model = model.to(backend.device).eval()
    processor = transformers.WhisperProcessor.from_pretrained(str(backend.model_dir))
    kwargs: dict[str, Any] = {"num_beams": 1, "do_sample": False, "max_new_tokens": 224}
    if backend.multilingual:
        kwargs.update(language=backend.options.language, task=backend.options.task)

    def run(clips: list[np.ndarray]) -> list[str]:
        feats = processor.feature_extractor(clips, sampling_rate=16_000, return_tensors="pt").input_features
        with torch.inference_mode():
            ids = model.generate(feats.to(backend.device, dtype=dtype), **kwargs)
        return [t.strip() for t in processor.tokenizer.batch_decode(ids, skip_special_tokens=True)]

    return run


def raw_ctc(backend: Any) -> RawFn:
    """``AutoModelForCTC`` forward with the padding mask, argmax, ``batch_decode``."""
    import torch
    import transformers

    from asr_audit.models.whisper_torch import dtype_kwarg

    dtype = getattr(torch, backend.dtype)
    model = transformers.AutoModelForCTC.from_pretrained(str(backend.model_dir), **dtype_kwarg(dtype))
    model = model.to(backend.device).eval()
    processor = transformers.AutoProcessor.from_pretrained(str(backend.model_dir))
    masked = bool(getattr(processor.feature_extractor, "return_attention_mask", False))

    def forward(clips: list[np.ndarray]) -> list[str]:
        inputs = processor(clips, sampling_rate=16_000, return_tensors="pt", padding=True)
        kwargs = {"attention_mask": inputs["attention_mask"].to(backend.device)} if masked else {}
        with torch.inference_mode():
            logits = model(inputs["input_values"].to(backend.device, dtype=dtype), **kwargs).logits
        n_out = model._get_feat_extract_output_lengths(torch.tensor([len(c) for c in clips])).tolist()
        paths = logits.argmax(-1).cpu()
        return [processor.tokenizer.decode(paths[i, : int(n)].tolist()).strip() for i, n in enumerate(n_out)]

    def run(clips: list[np.ndarray]) -> list[str]:
        # without an attention mask, padding changes the outputs: such models are run one clip at a time
        return forward(clips) if masked else [t for c in clips for t in forward([c])]

    return run


def raw_engine(backend: Any) -> RawFn:
    from asr_audit.models.ct2 import CT2WhisperBackend
    from asr_audit.models.hf_ctc import HFCTCBackend
    from asr_audit.models.whisper_torch import TorchWhisperBackend

    if isinstance(backend, CT2WhisperBackend):
        return raw_ct2(backend)
    if isinstance(backend, TorchWhisperBackend):
        return raw_torch_whisper(backend)
    if isinstance(backend, HFCTCBackend):
        return raw_ctc(backend)
    raise SystemExit(f"{backend.spec}: no raw engine known for {type(backend).__name__}")


def forget_encodings(backend: Any) -> None:
    """Empty the PyTorch Whisper backend's encoder memo, so no timed run reuses an encoding."""
    memo = getattr(backend, "__dict__", {}).get("_enc_memo")
    if memo is not None:
        memo.clear()


Timing = tuple[float, float]  # (wall seconds, CPU seconds of this process, all threads)


def timed(
    fn: RawFn, batches: Sequence[list[np.ndarray]], sync: Callable[[], None], reset: Callable[[], None], repeat: int
) -> tuple[list[str], Timing]:
    """Texts of every batch and the fastest of ``repeat`` timed passes (after one warm-up batch)."""
    fn(batches[0][:2])  # warm-up (kernels, allocator)
    best = (float("inf"), float("inf"))
    out: list[str] = []
    for _ in range(repeat):
        reset()
        sync()
        t0, c0 = time.perf_counter(), time.process_time()
        out = [t for b in batches for t in fn(b)]
        sync()
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return out, best


def pipeline(
    backend: Any, clips: list[np.ndarray], ids: list[str], batch_size: int, reset: Callable[[], None], repeat: int
) -> tuple[list[str], Timing]:
    """``transcribe_corpus`` into a fresh temporary store each pass; returns (texts, fastest seconds)."""
    from asr_audit.corpus.clips import ArraySource, Clip, Corpus
    from asr_audit.store.sqlite import open_store
    from asr_audit.store.transcribe import transcribe_corpus

    corpus = Corpus(
        "bench",
        "test",
        "bench",
        tuple(
            Clip(id=i, reference="", source=ArraySource(c, 16_000), duration=len(c) / 16_000)
            for i, c in zip(ids, clips)
        ),
    )
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        reset()
        with tempfile.TemporaryDirectory(prefix="asr-audit-gpu-") as tmp, open_store(Path(tmp) / "s.sqlite") as st:
            t0, c0 = time.perf_counter(), time.process_time()
            outcome = transcribe_corpus(backend, corpus, st, batch_size=batch_size)
            best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    by_id = {r.clip_id: r.hypothesis for r in outcome.records}
    return [by_id.get(i, "") for i in ids], best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="whisper-tiny.en,whisper-tiny.en-pt", help="comma-separated model specs")
    ap.add_argument("--clips", type=int, default=10, help="clips (the 5 LibriVox clips, cycled)")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1, help="timed passes per stage; the fastest counts")
    ap.add_argument("--device", default="auto", help="cpu | cuda | cuda:N | auto")
    ap.add_argument("--compute-type", default="default", help="default | float32 | float16 | bfloat16 | int8")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from asr_audit.models.base import DecodeOptions, RuntimeOptions, load_backend
    from asr_audit.models.whisper_common import length_sorted_batches

    try:  # transformers' generate warns about its own defaults on every call
        import transformers

        transformers.logging.set_verbosity_error()
    except ImportError:
        pass

    clips, ids = librivox_clips(args.clips)
    seconds = sum(len(c) for c in clips) / 16_000
    groups = length_sorted_batches([len(c) for c in clips], args.batch_size)
    batches = [[clips[i] for i in g] for g in groups]
    runtime = RuntimeOptions(device=args.device, batch_size=args.batch_size)
    options = DecodeOptions(compute_type=args.compute_type)
    results = []
    print(f"{len(clips)} clips, {seconds:.1f} s of audio, batch {args.batch_size}, device request {args.device!r}")
    for spec in [s.strip() for s in args.models.split(",") if s.strip()]:
        backend = load_backend(spec, options, runtime)
        device = str(getattr(backend, "device", "cpu"))
        dtype = str(getattr(backend, "dtype", None) or getattr(backend, "compute_type", "?"))

        def sync(_device: str = device) -> None:
            if _device.startswith("cuda"):  # CTranslate2 returns finished results; torch queues kernels
                try:
                    import torch
                except ImportError:
                    return
                torch.cuda.synchronize()

        raw = raw_engine(backend)

        def reset(_backend: Any = backend) -> None:
            forget_encodings(_backend)

        raw_texts, (raw_s, raw_cpu) = timed(raw, batches, sync, reset, args.repeat)
        ours, (ours_s, ours_cpu) = timed(backend.transcribe, batches, sync, reset, args.repeat)
        order = [i for g in groups for i in g]
        raw_by_clip = dict(zip(order, raw_texts))
        ours_by_clip = dict(zip(order, ours))
        pipe_texts, (pipe_s, pipe_cpu) = pipeline(backend, clips, ids, args.batch_size, reset, args.repeat)
        same = sum(raw_by_clip[i] == ours_by_clip[i] for i in range(len(clips)))
        row = {
            "model": spec,
            "device": device,
            "dtype": dtype,
            "clips": len(clips),
            "audio_seconds": round(seconds, 2),
            "batch_size": args.batch_size,
            "repeat": args.repeat,
            "rtfx_raw": round(seconds / raw_s, 2),
            "rtfx_backend": round(seconds / ours_s, 2),
            "rtfx_pipeline": round(seconds / pipe_s, 2),
            "pipeline_share_of_raw": round(raw_s / pipe_s, 3),
            "cpu_seconds": {"raw": round(raw_cpu, 2), "backend": round(ours_cpu, 2), "pipeline": round(pipe_cpu, 2)},
            "same_as_raw": same,
            "pipeline_equals_backend": pipe_texts == [ours_by_clip[i] for i in range(len(clips))],
        }
        results.append(row)
        print(f"{spec}  device {device}  dtype {dtype}")
        print(f"  raw engine  {raw_s:8.2f} s   RTFx {seconds / raw_s:7.1f}   CPU {raw_cpu:7.2f} s")
        print(f"  backend     {ours_s:8.2f} s   RTFx {seconds / ours_s:7.1f}   CPU {ours_cpu:7.2f} s")
        print(
            f"  pipeline    {pipe_s:8.2f} s   RTFx {seconds / pipe_s:7.1f}   CPU {pipe_cpu:7.2f} s   "
            f"{100 * raw_s / pipe_s:.0f}% of the raw engine's RTFx (target on a GPU: >= 90%)"
        )
        print(
            f"  transcripts equal to the raw engine's: {same}/{len(clips)}; pipeline = backend: {row['pipeline_equals_backend']}"
        )
        close = getattr(backend, "close", None)
        if callable(close):
            close()
        del backend, raw
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
