"""Capture overhead: ``asr_audit.mechrun.capture`` vs a plain forward pass over the same clips.

The plain pass is the backend's encoder forward (and, with ``--decoder``, the teacher-forced
decoder forward of :meth:`score`) on the same batches; capture adds the recording hooks, the copy
to CPU, the frame trimming and the streamed writes. Target: within 15% on CPU. Both run
``--repeats`` times, alternating, and the medians are compared (the encoder memo is cleared
before every pass so neither side is served from it).

    python benchmarks/mech_capture.py [--clips 16] [--repeats 3] [--decoder]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="whisper-tiny.en-pt")
    ap.add_argument("--clips", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--decoder", action="store_true", help="also capture decoder sites (teacher-forced)")
    args = ap.parse_args(argv)
    import soundfile as sf
    import torch

    from asr_audit.data import LIBRIVOX
    from asr_audit.mechrun.capture import capture
    from asr_audit.models.base import load_backend
    from asr_audit.models.whisper_torch import TorchWhisperBackend

    backend = load_backend(args.model)
    assert isinstance(backend, TorchWhisperBackend), args.model  # it captures the PyTorch Whisper's sites
    backend.batch_size = args.batch_size
    base = []
    texts_all = []
    for line in (LIBRIVOX / "transcription.txt").read_text().splitlines():
        cid, text = line.split(" ", 1)
        samples, _ = sf.read(LIBRIVOX / f"{cid}.flac", dtype="float32")
        base.append(samples)
        texts_all.append(text.lower())
    rng = np.random.default_rng(0)
    clips = [(f"c{i}", base[i % len(base)] * np.float32(1 + 0.01 * rng.random())) for i in range(args.clips)]
    texts = [texts_all[i % len(base)] for i in range(args.clips)]
    n_enc = len(backend.torch_model.model.encoder.layers)
    sites = [f"encoder.layers.{i}.out" for i in range(n_enc)] + ["encoder.out"]
    if args.decoder:
        sites += [f"decoder.layers.{i}.out" for i in range(len(backend.torch_model.model.decoder.layers))]

    def plain() -> float:
        backend.__dict__.pop("_enc_memo", None)
        t0 = time.perf_counter()
        with torch.inference_mode():
            for i in range(0, len(clips), args.batch_size):
                chunk = [a for _, a in clips[i : i + args.batch_size]]
                if args.decoder:
                    backend.score(chunk, [""] * len(chunk), texts[i : i + args.batch_size])
                else:
                    backend._encoder_states(chunk)
        return time.perf_counter() - t0

    def captured(root: Path) -> float:
        backend.__dict__.pop("_enc_memo", None)
        t0 = time.perf_counter()
        capture(backend, clips, sites, root, texts=texts if args.decoder else None, batch_size=args.batch_size)
        return time.perf_counter() - t0

    plain()  # warm-up
    p_times, c_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            p_times.append(plain())
            c_times.append(captured(Path(tmp) / f"r{r}"))
    p, c = statistics.median(p_times), statistics.median(c_times)
    print(
        f"{args.clips} clips, {len(sites)} sites, batch {args.batch_size}: plain forward {p:.2f} s, "
        f"capture {c:.2f} s (median of {args.repeats}); overhead {100 * (c / p - 1):+.1f}% (target <= +15%)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
