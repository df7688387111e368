"""Time the text normalizers on the VoxPopuli fixture sentences (same process, same inputs).

Usage: python benchmarks/normalize.py [--repeats N]

Prints microseconds per sentence for the reference ``whisper-normalizer`` EnglishTextNormalizer
and for asr-audit's ``whisper`` (fast path, identical output, checked here too), ``oal`` and
``basic``, then the cost per sentence of ``normalize_many`` on a 10-model benchmark where each
reference appears 10 times.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from asr_audit.data import voxpopuli_texts
from asr_audit.text.normalize import clear_normalize_cache, get_normalizer, normalize_many
from asr_audit.text.whisper_en import WhisperNormalizer, package_version


def load_sentences() -> list[str]:
    return voxpopuli_texts()


def per_sentence_us(fns: list[Callable[[str], str]], sentences: list[str], repeats: int) -> list[float]:
    """Best-of-``repeats`` time of one pass over ``sentences`` per function, µs per sentence.

    The functions take turns within each repeat, so a busy machine slows them alike.
    """
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for sentence in sentences:
                fn(sentence)
            best[i] = min(best[i], time.perf_counter() - start)
    return [b / len(sentences) * 1e6 for b in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    sentences = load_sentences()
    fast = WhisperNormalizer()
    reference = fast.reference
    mismatches = sum(fast(s) != reference(s) for s in sentences)
    print(
        f"{len(sentences)} fixture sentences ({len(set(sentences))} distinct); "
        f"whisper-normalizer {package_version('whisper-normalizer')}; "
        f"fast path active: {fast.fast}; mismatches vs reference: {mismatches}"
    )

    ref_us, fast_us = per_sentence_us([reference, fast], sentences, args.repeats)
    print(f"{'reference whisper-normalizer':32s} {ref_us:8.1f} µs/sentence")
    print(f"{'asr-audit whisper':32s} {fast_us:8.1f} µs/sentence  ({ref_us / fast_us:.1f}x faster)")
    for name in ("oal", "basic"):
        [us] = per_sentence_us([get_normalizer(name)], sentences, args.repeats)
        print(f"{'asr-audit ' + name:32s} {us:8.1f} µs/sentence")

    refs = sentences[0::2][:150]  # the 150 distinct references of one file
    workload = [text for _ in range(10) for text in refs]  # 10 models score the same refs
    best = float("inf")
    for _ in range(args.repeats):
        clear_normalize_cache()
        start = time.perf_counter()
        normalize_many("whisper", workload)
        best = min(best, time.perf_counter() - start)
    print(f"{'normalize_many, refs x10 models':32s} {best / len(workload) * 1e6:8.1f} µs/sentence (cache starts empty)")


if __name__ == "__main__":
    main()
