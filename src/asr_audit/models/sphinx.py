"""``sphinx:en-us`` — CMU PocketSphinx with the US-English model bundled in its wheel.

A light, CPU-only, fully offline backend: useful as a non-neural baseline that cannot have
memorized any benchmark transcript, and for tests. Each clip is decoded as one full utterance
(batch cepstral mean normalization), so results do not depend on clip order and are
deterministic. Clips longer than :data:`MAX_DURATION` are rejected: segment long audio first.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from asr_audit.errors import BackendError, ConfigError, require
from asr_audit.models.base import TRANSCRIBE, BaseBackend, DecodeOptions, hash_files, register_backend

MODELS = ("en-us",)
MAX_DURATION = 30.0


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

    def __init__(self, model: str, options: DecodeOptions) -> None:
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

    def _get_decoder(self):  # noqa: ANN202
        if self._decoder is None:
            ps = require("pocketsphinx", "sphinx")
            hmm, lm, dic = _model_files(self._model)
            self._decoder = ps.Decoder(hmm=hmm, lm=lm, dict=dic, samprate=16000, loglevel="FATAL")
        return self._decoder

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        decoder = self._get_decoder()
        out = []
        for audio in audios:
            x = np.asarray(audio, dtype=np.float32)
            pcm = np.round(np.clip(x, -1.0, 1.0) * 32767.0).astype("<i2")
            decoder.start_utt()
            decoder.process_raw(pcm.tobytes(), full_utt=True)
            decoder.end_utt()
            hyp = decoder.hyp()
            out.append("" if hyp is None else " ".join(hyp.hypstr.split()))
        return out


@register_backend(
    "sphinx",
    description="CMU PocketSphinx (offline, CPU, bundled en-us model); sphinx:en-us",
    capabilities=[TRANSCRIBE],
    extra="sphinx",
)
def _make_sphinx(arg: str, options: DecodeOptions) -> SphinxBackend:
    return SphinxBackend(arg, options)
