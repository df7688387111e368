"""``sphinx:en-us`` — CMU PocketSphinx with the US-English model bundled in its wheel.

A light, CPU-only, fully offline backend: useful as a non-neural baseline that cannot have
memorized any benchmark transcript, and for tests. Each clip is decoded as one full utterance
(batch cepstral mean normalization), so results do not depend on clip order and are
deterministic. Clips longer than :data:`MAX_DURATION` are rejected: segment long audio first.

PocketSphinx decodes on one core and holds the GIL while it does, so a call with at least
:data:`PARALLEL_MIN_SECONDS` of audio is shared out: this process decodes some clips while worker
processes (one per further usable CPU, started once per backend and kept) decode the rest, each
with its own decoder. The transcripts are the same wherever a clip is decoded (each clip is one
utterance; ``tests/models/test_sphinx_backend.py`` checks them against the serial decode).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
from collections.abc import Sequence
from concurrent.futures import BrokenExecutor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import BackendError, ConfigError, require
from asr_audit.models.base import TRANSCRIBE, BaseBackend, DecodeOptions, hash_files, register_backend, usable_cpus

MODELS = ("en-us",)
MAX_DURATION = 30.0
# a call with less audio than this decodes in this process only (a worker's start, ~1 CPU s, would
# not pay); the demo's batches of eight 3-s clips have 24 s
PARALLEL_MIN_SECONDS = 16.0


@functools.lru_cache(maxsize=4)
def _model_files(model: str) -> tuple[str, str, str]:
    ps = require("pocketsphinx", "sphinx")
    root = Path(ps.get_model_path()) / model
    hmm, lm, dic = root / model, root / f"{model}.lm.bin", root / "cmudict-en-us.dict"
    for p in (hmm, lm, dic):
        if not p.exists():
            raise BackendError(
                f"PocketSphinx model file {p} is missing; fix: reinstall with pip install 'asr-audit[sphinx]'"
            )
    return str(hmm), str(lm), str(dic)


@functools.lru_cache(maxsize=4)
def _weights_hash(model: str) -> str:
    hmm, lm, dic = _model_files(model)
    files = sorted(str(p) for p in Path(hmm).iterdir() if p.is_file() and p.name != "README")
    return hash_files([*files, lm, dic])


class SphinxBackend(BaseBackend):
    """PocketSphinx greedy (Viterbi + n-gram LM) transcription."""

    capabilities = frozenset({TRANSCRIBE})
    code_version = "sphinx/1"
    max_duration = MAX_DURATION

    def __init__(self, model: str, options: DecodeOptions, *, workers: int | None = None) -> None:
        if model not in MODELS:
            raise ConfigError(f"sphinx model {model!r} is unknown; valid: {', '.join(MODELS)} (e.g. sphinx:en-us)")
        if options.language not in (None, "en"):
            raise ConfigError(
                f"sphinx:{model} transcribes English only, got language={options.language!r}; "
                "fix: use --language en or another backend"
            )
        if options.task != "transcribe":
            raise ConfigError("sphinx cannot translate; fix: use task=transcribe")
        super().__init__(f"sphinx:{model}", options, _weights_hash(model))
        self._model = model
        self._decoder = None
        self._pool: tuple[ProcessPoolExecutor, int] | None = None
        self._serial = workers == 0  # also set when a worker process died
        self._n_workers = workers  # None: one per usable CPU beyond this process's

    def _get_decoder(self):  # noqa: ANN202
        if self._decoder is None:
            self._decoder = _new_decoder(self._model)
        return self._decoder

    def _workers(self) -> tuple[ProcessPoolExecutor, int] | None:
        """The worker processes, started on first use: ``workers`` of them, by default one per usable
        CPU beyond this process's (capped by ``$OMP_NUM_THREADS`` where set, as Ray sets it for its
        workers); none on one CPU or with ``workers=0``."""
        if self._pool is None and not self._serial:
            n = self._n_workers
            if n is None:
                cpus = usable_cpus()
                cap = os.environ.get("OMP_NUM_THREADS", "")
                n = min(cpus, int(cap)) - 1 if cap.isdigit() and int(cap) > 0 else cpus - 1
            if n < 1:
                return None
            pool = ProcessPoolExecutor(
                n, multiprocessing.get_context("spawn"), initializer=_worker_init, initargs=(self._model,)
            )
            self._pool = (pool, n)
        return self._pool

    def close(self) -> None:
        """Stop the worker processes (a later call with enough audio starts them again)."""
        if self._pool is not None:
            self._pool[0].shutdown(wait=True)
            self._pool = None

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        pcms = [_pcm(a) for a in audios]
        decoder = self._get_decoder()
        workers = self._workers() if len(pcms) > 1 and sum(map(len, pcms)) >= PARALLEL_MIN_SECONDS * 32_000 else None
        if workers is None:
            return [_decode(decoder, p) for p in pcms]
        pool, n_workers = workers
        # longest first, each clip to the least-loaded share; share 0 is this process's (2 bytes a sample)
        shares: list[list[int]] = [[] for _ in range(n_workers + 1)]
        loads = [0] * len(shares)
        for i in sorted(range(len(pcms)), key=lambda i: -len(pcms[i])):
            k = loads.index(min(loads))
            shares[k].append(i)
            loads[k] += len(pcms[i])
        futures: list[tuple[list[int], Future[list[str]]]] = [
            (rows, pool.submit(_worker_decode, [pcms[i] for i in rows])) for rows in shares[1:] if rows
        ]
        out = [""] * len(pcms)
        for i in shares[0]:
            out[i] = _decode(decoder, pcms[i])
        for rows, future in futures:
            try:
                texts = future.result()
            except BrokenExecutor:  # a worker died (killed, out of memory): decode here from now on
                self._pool, self._serial = None, True
                texts = [_decode(decoder, pcms[i]) for i in rows]
            for i, text in zip(rows, texts):
                out[i] = text
        return out


def _new_decoder(model: str) -> Any:
    ps = require("pocketsphinx", "sphinx")
    hmm, lm, dic = _model_files(model)
    return ps.Decoder(hmm=hmm, lm=lm, dict=dic, samprate=16000, loglevel="FATAL")


def _pcm(audio: np.ndarray) -> bytes:
    """16-bit little-endian PCM bytes of a float waveform in [-1, 1]."""
    x = np.asarray(audio, dtype=np.float32)
    return np.round(np.clip(x, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def _decode(decoder: Any, pcm: bytes) -> str:
    """One clip decoded as one full utterance."""
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    hyp = decoder.hyp()
    return "" if hyp is None else " ".join(hyp.hypstr.split())


_WORKER_DECODER: Any = None  # a worker process's decoder


def _worker_init(model: str) -> None:
    global _WORKER_DECODER
    # Ctrl-C reaches the whole process group: the parent handles it (and stops its workers), a
    # worker printing its own KeyboardInterrupt traceback would only add noise
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_DECODER = _new_decoder(model)


def _worker_decode(pcms: list[bytes]) -> list[str]:
    return [_decode(_WORKER_DECODER, p) for p in pcms]


@register_backend(
    "sphinx",
    description="CMU PocketSphinx (offline, CPU, bundled en-us model); sphinx:en-us",
    capabilities=[TRANSCRIBE],
    extra="sphinx",
)
def _make_sphinx(arg: str, options: DecodeOptions) -> SphinxBackend:
    return SphinxBackend(arg, options)
