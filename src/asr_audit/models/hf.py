"""``hf:<hub id or dir>`` — Hugging Face Whisper models run with PyTorch, and the bundled
Whispers rebuilt in PyTorch: ``whisper-tiny.en-pt`` and ``whisper-base-pt``.

Naming: a bundled name alone (``whisper-tiny.en``) runs the CTranslate2 weights with
CTranslate2; the same name with ``-pt`` runs the same weights converted to a
``WhisperForConditionalGeneration`` (:mod:`asr_audit.models.whisper_convert`), which adds the
``score`` and ``sites`` capabilities. Both report the source weights' hash.

The device comes from the runtime options (spec ``device``, CLI ``--device``; see
:class:`~asr_audit.models.base.RuntimeOptions`) or ``$ASR_AUDIT_DEVICE`` (``cpu``, ``cuda``,
``cuda:N``, ``auto``). Its kind enters the identity when it is not the CPU; ``compute_type =
"default"`` runs float16 on CUDA, float32 on the CPU (``bfloat16`` on request).
"""

from __future__ import annotations

import json
from pathlib import Path

from asr_audit.errors import BackendError, require
from asr_audit.models.base import SCORE, SITES, TRANSCRIBE, DecodeOptions, RuntimeOptions, register_backend
from asr_audit.models.bundled import BUNDLED_MODELS, bundled_model_dir
from asr_audit.models.cache import weights_hash
from asr_audit.models.ct2 import ct2_weight_files
from asr_audit.models.whisper_torch import TorchWhisperBackend

_HF_FILES = (
    "config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "merges.txt",
    "added_tokens.json",
    "special_tokens_map.json",
    "normalizer.json",
)
TORCH_SUFFIX = "-pt"


def hf_weight_files(model_dir: Path) -> list[Path]:
    """The weights (safetensors, else ``pytorch_model*.bin``) and the config/tokenizer files."""
    weights = sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("pytorch_model*.bin"))
    if not weights:
        raise BackendError(
            f"{model_dir} holds no *.safetensors or pytorch_model*.bin; fix: point at a Hugging Face model directory"
        )
    return weights + [model_dir / n for n in _HF_FILES if (model_dir / n).is_file()]


def resolve_hf_dir(arg: str) -> Path:
    """A local directory as is, or a hub id fetched (or found in the local HF cache)."""
    local = Path(arg).expanduser()
    if local.is_dir():
        return local
    if local.exists() or arg.startswith((".", "/", "~")):
        raise BackendError(
            f"{arg}: not a model directory; fix: give a directory or a hub id such as openai/whisper-tiny.en"
        )
    hub = require("huggingface_hub", "torch")
    repo, _, revision = arg.partition("@")
    try:
        path = hub.snapshot_download(
            repo, revision=revision or None, allow_patterns=["*.json", "*.safetensors", "*.txt", "*.model"]
        )
    except Exception as exc:
        raise BackendError(
            f"cannot fetch {arg!r} from the Hugging Face hub ({type(exc).__name__}); "
            "fix: check the id and your network, or pass a local model directory"
        ) from exc
    return Path(path)


def model_type(model_dir: Path) -> str:
    try:
        return str(json.loads((model_dir / "config.json").read_text()).get("model_type", ""))
    except (OSError, ValueError) as exc:
        raise BackendError(
            f"{model_dir / 'config.json'}: cannot read ({exc}); fix: point at a Hugging Face model directory"
        ) from exc


def load_hf_whisper(
    arg: str, options: DecodeOptions, *, device: str | None = None, batch_size: int = 8
) -> TorchWhisperBackend:
    """``hf:<arg>`` — a Whisper seq2seq model from the hub or a local directory."""
    model_dir = resolve_hf_dir(arg)
    kind = model_type(model_dir)
    if kind != "whisper":
        hint = "hf-ctc:" if kind in ("wav2vec2", "hubert", "wavlm", "data2vec-audio", "mctct") else "a Whisper model"
        raise BackendError(
            f"hf:{arg} is a {kind or 'unknown'} model; hf: serves Whisper seq2seq models; fix: use {hint}"
        )
    return TorchWhisperBackend(
        model_dir, f"hf:{arg}", options, weights_hash(hf_weight_files(model_dir)), device=device, batch_size=batch_size
    )


def load_bundled_torch(
    name: str, options: DecodeOptions, *, device: str | None = None, batch_size: int = 8
) -> TorchWhisperBackend:
    """A bundled Whisper rebuilt in PyTorch (converted once, then loaded from the cache)."""
    # read when called: tests substitute whisper_convert's version and converted folder
    from asr_audit.models.whisper_convert import CONVERTER_VERSION, converted_whisper_dir

    source = bundled_model_dir(name)
    return TorchWhisperBackend(
        converted_whisper_dir(source),
        name + TORCH_SUFFIX,
        options,
        weights_hash(ct2_weight_files(source)),
        device=device,
        batch_size=batch_size,
        converter=CONVERTER_VERSION,
    )


@register_backend(
    "hf",
    description="Hugging Face Whisper model, hub id or local dir (hf:openai/whisper-tiny.en), PyTorch",
    capabilities=[TRANSCRIBE, SCORE, SITES],
    extra="torch",
)
def _hf_factory(arg: str, options: DecodeOptions, runtime: RuntimeOptions | None = None) -> TorchWhisperBackend:
    return load_hf_whisper(arg, options, **(runtime or RuntimeOptions()).kwargs())


def _register_bundled(name: str) -> None:
    model = BUNDLED_MODELS[name]

    @register_backend(
        name + TORCH_SUFFIX,
        description=f"{model.description}, bundled offline ({model.install_hint}), rebuilt in PyTorch",
        capabilities=[TRANSCRIBE, SCORE, SITES],
        bundled=True,
        extra="torch",
    )
    def factory(arg: str, options: DecodeOptions, runtime: RuntimeOptions | None = None) -> TorchWhisperBackend:
        return load_bundled_torch(name, options, **(runtime or RuntimeOptions()).kwargs())


for _name in BUNDLED_MODELS:
    _register_bundled(_name)
