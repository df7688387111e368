"""PocketSphinx in this process only against shared with its worker processes (issue 30).

PocketSphinx decodes on one core and holds the GIL, so on a 2-core machine a serial decode leaves a
core idle. ``sphinx:en-us`` shares a batch with enough audio out to worker processes
(``asr_audit.models.sphinx``). This script decodes the same clips in batches of ``--batch-size``
both ways, alternating for ``--rounds`` rounds, and prints wall seconds and CPU seconds (this
process plus its worker processes, user + system, the workers' start included) per arm, asserting
identical transcripts.

    python benchmarks/sphinx_workers.py --clips flite --rounds 2
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inference import make_clips  # the benchmarks folder is not a package


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def decode(audios: list, workers: int | None, batch_size: int) -> tuple[list[str], float, float]:
    """(transcripts, wall s, CPU s of this process and its reaped workers) with a fresh backend."""
    from asr_audit.models.base import DecodeOptions
    from asr_audit.models.sphinx import SphinxBackend

    backend = SphinxBackend("en-us", DecodeOptions(), workers=workers)
    backend.transcribe(audios[:1])  # this process's decoder built outside the timing, as in a run
    w0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    texts: list[str] = []
    for start in range(0, len(audios), batch_size):
        texts += backend.transcribe(audios[start : start + batch_size])
    backend.close()  # the workers exit and are reaped: their CPU counts
    return texts, time.perf_counter() - w0, time.process_time() - c0 + _children_cpu() - k0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", choices=["librivox", "flite"], default="flite")
    ap.add_argument("--repeat", type=int, default=2, help="copies of the LibriVox clips")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()

    import soundfile as sf

    from asr_audit.audio.io import to_mono_16k

    with tempfile.TemporaryDirectory() as tmp:
        files, _, seconds = make_clips(args.clips, args.repeat, Path(tmp))
        audios = [to_mono_16k(*sf.read(str(f), dtype="float32")) for f in files]
    arms = {"this process only": 0, "shared with workers": None}
    runs: dict[str, list[tuple[float, float]]] = {a: [] for a in arms}
    texts: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for arm, workers in arms.items():
            got, wall, cpu = decode(audios, workers, args.batch_size)
            assert texts.setdefault(arm, got) == got
            runs[arm].append((wall, cpu))
    assert texts["this process only"] == texts["shared with workers"], "the transcripts differ"
    load = os.getloadavg()[0]
    print(
        f"sphinx:en-us: {len(audios)} {args.clips} clips, {seconds:.1f} s of audio, batch {args.batch_size}, "
        f"{args.rounds} round(s), medians; usable CPUs {len(os.sched_getaffinity(0))}; load average {load:.1f} at the end"
    )
    print(f"  {'arm':<22} {'wall s':>8} {'RTFx':>6} {'CPU s':>7}")
    for arm, rows in runs.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        print(f"  {arm:<22} {wall:8.2f} {seconds / wall:6.1f} {cpu:7.2f}")
    print("  transcripts identical in both arms")


if __name__ == "__main__":
    main()
