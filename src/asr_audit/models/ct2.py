"""``ct2:<dir>`` — CTranslate2 Whisper (faster-whisper) model directories, and the bundled
``whisper-tiny.en`` / ``whisper-base`` served through CTranslate2 (the default engine).

Features are computed in numpy (:mod:`asr_audit.models.whisper_features`) with the settings
of the directory's ``preprocessor_config.json`` when present (else 80 or 128 mel bins read from
the weights), so this backend needs ``ctranslate2`` and ``tokenizers`` but not torch. Decoding
is ``Whisper.generate`` with beam size from the decode options (1 = greedy), the prompt
``<|startoftranscript|>`` [+ language + task for multilingual models] + ``<|notimestamps|>``,
the model's ``suppress_ids`` and blank suppression at the first step, and
at most ``min(max_new_tokens, 224)`` new tokens (224 = half the decoder's 448 positions, the
cap OpenAI's decoder and CTranslate2 both apply).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from asr_audit.errors import BackendError, ConfigError, InputFileError, require
from asr_audit.models.base import (
    TRANSCRIBE,
    BaseBackend,
    DecodeOptions,
    RuntimeOptions,
    register_backend,
    usable_cpus,
)
from asr_audit.models.bundled import BUNDLED_MODELS, bundled_model_dir
from asr_audit.models.cache import weights_hash
from asr_audit.models.whisper_common import (
    WHISPER_MAX_NEW_TOKENS,
    WHISPER_MAX_SECONDS,
    check_audios,
    device_code,
    length_sorted_batches,
    prompt_ids,
    resolve_device,
)
from asr_audit.models.whisper_convert import read_ct2_index
from asr_audit.models.whisper_features import MelSettings, batch_log_mel

_COMPUTE_TYPES = {
    "default": "default",
    "float32": "float32",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "int8": "int8",
}


def ct2_weight_files(model_dir: Path) -> list[Path]:
    """The files whose bytes define a CTranslate2 Whisper model's outputs."""
    names = ("model.bin", "config.json", "tokenizer.json", "preprocessor_config.json")
    return [model_dir / n for n in names if (model_dir / n).is_file()]


def mel_settings_for(model_dir: Path) -> MelSettings:
    """Mel settings of a CTranslate2 Whisper directory."""

    n_mels = read_ct2_index(model_dir / "model.bin").shape("encoder/conv1/weight")[1]
    pre = model_dir / "preprocessor_config.json"
    return MelSettings.from_preprocessor_config(pre, n_mels) if pre.is_file() else MelSettings(n_mels=n_mels)


class CT2WhisperBackend(BaseBackend):
    """Greedy Whisper transcription with CTranslate2.

    The identity carries the compute type CTranslate2 actually uses (``default`` resolves to
    float32 on CPU and, for float16 weights, float16 on a GPU) and the device kind when it is
    not the CPU, so results computed on two machines never share a cache key unless they were
    computed the same way. Clips are decoded in length-sorted batches of ``batch_size`` (every
    clip padded to 30 s of features, so a clip's transcript does not depend on its batch).
    """

    capabilities = frozenset({TRANSCRIBE})
    code_version = "ct2-whisper/1"
    max_duration = WHISPER_MAX_SECONDS

    def __init__(
        self,
        model_dir: str | Path,
        spec: str,
        options: DecodeOptions,
        *,
        device: str | None = None,
        batch_size: int = 8,
        cpu_threads: int = 0,
    ) -> None:
        ctranslate2 = require("ctranslate2", "ct2")
        tokenizers = require("tokenizers", "ct2")
        model_dir = Path(model_dir).expanduser()
        for needed in ("model.bin", "tokenizer.json"):
            if not (model_dir / needed).is_file():
                raise InputFileError(
                    model_dir,
                    f"is not a CTranslate2 Whisper directory (no {needed})",
                    "point ct2: at a faster-whisper model directory",
                )
        if options.compute_type not in _COMPUTE_TYPES:
            raise ConfigError(f"compute_type {options.compute_type!r} is unknown; valid: {', '.join(_COMPUTE_TYPES)}")
        super().__init__(spec, options, weights_hash(ct2_weight_files(model_dir)))
        self.model_dir = model_dir
        self.batch_size = batch_size
        self.device = resolve_device(device, lambda: ctranslate2.get_cuda_device_count() > 0)
        kind, _, index = self.device.partition(":")
        compute_type = _COMPUTE_TYPES[options.compute_type]
        if compute_type == "default" and kind == "cpu":
            compute_type = "float32"  # what CTranslate2 falls back to on CPU for float16 weights, without its warning
        try:
            self._model = ctranslate2.models.Whisper(
                str(model_dir),
                device=kind,
                device_index=int(index or 0),
                compute_type=compute_type,
                intra_threads=cpu_threads or usable_cpus(),
            )
        except (RuntimeError, ValueError) as exc:
            raise BackendError(
                f"{spec}: CTranslate2 cannot load {model_dir} ({exc}); fix: check the model directory"
            ) from exc
        # the compute type CTranslate2 resolved ("default" -> the weights' type the device supports)
        self.compute_type = str(getattr(self._model, "compute_type", compute_type))
        self._tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.mel = mel_settings_for(model_dir)
        if self.mel.n_mels != self._model.n_mels:
            raise InputFileError(
                model_dir / "preprocessor_config.json",
                f"says {self.mel.n_mels} mel bins, the model wants {self._model.n_mels}",
                "fix feature_size",
            )
        self.multilingual = bool(self._model.is_multilingual)
        self.prompt = prompt_ids(spec, self._tokenizer.token_to_id, self.multilingual, options)
        # CTranslate2's Whisper.generate emits at most max_length // 2 tokens whatever the prompt
        # length (as OpenAI's sample_len = n_text_ctx // 2); ask for exactly max_new_tokens.
        self.max_new_tokens = min(options.max_new_tokens, WHISPER_MAX_NEW_TOKENS)
        self.max_length = 2 * self.max_new_tokens

    def identity_code(self) -> dict[str, str]:
        """Code version, the resolved compute type and the device kind when not the CPU."""
        return {**super().identity_code(), "compute_type": self.compute_type, **device_code(self.device)}

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        ctranslate2 = require("ctranslate2", "ct2")
        clips = check_audios(self.spec, audios, self.max_duration)
        texts = [""] * len(clips)
        for rows in length_sorted_batches([len(c) for c in clips], self.batch_size):
            features = ctranslate2.StorageView.from_array(
                np.ascontiguousarray(batch_log_mel([clips[i] for i in rows], self.mel))
            )
            results = self._model.generate(
                features,
                [self.prompt] * len(rows),
                beam_size=self.options.beam_size,
                max_length=self.max_length,
                suppress_blank=True,
                suppress_tokens=[-1],
            )
            for i, r in zip(rows, results):
                texts[i] = self._tokenizer.decode(r.sequences_ids[0], skip_special_tokens=True).strip()
        return texts


@register_backend(
    "ct2",
    description="CTranslate2 Whisper / faster-whisper model directory (ct2:<dir>)",
    capabilities=[TRANSCRIBE],
    extra="ct2",
)
def _ct2_factory(arg: str, options: DecodeOptions, runtime: RuntimeOptions | None = None) -> CT2WhisperBackend:
    return CT2WhisperBackend(arg, f"ct2:{arg}", options, **(runtime or RuntimeOptions()).kwargs())


def _register_bundled(name: str) -> None:
    model = BUNDLED_MODELS[name]

    @register_backend(
        name,
        description=f"{model.description}, bundled offline ({model.install_hint}), served by CTranslate2",
        capabilities=[TRANSCRIBE],
        bundled=True,
        extra="ct2",
    )
    def factory(arg: str, options: DecodeOptions, runtime: RuntimeOptions | None = None) -> CT2WhisperBackend:
        return CT2WhisperBackend(bundled_model_dir(name), name, options, **(runtime or RuntimeOptions()).kwargs())


for _name in BUNDLED_MODELS:
    _register_bundled(_name)
