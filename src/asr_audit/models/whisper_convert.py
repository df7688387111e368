"""CTranslate2 Whisper ``model.bin`` -> ``transformers.WhisperForConditionalGeneration``.

``model.bin`` (binary version 6, written by ``ctranslate2.specs.ModelSpec._serialize``) is::

    u32 version | str spec_name | u32 revision | u32 n_variables
    n_variables x (str name | u8 rank | rank x u32 dim | u8 dtype_id | u32 n_bytes | bytes)
    u32 n_aliases | n_aliases x (str alias | str target)

where ``str`` is ``u16 length-including-NUL | utf-8 | NUL`` and dtype ids are
float32, int8, int16, int32, float16, bfloat16 (0..5), all little-endian.

The rebuild splits the fused projections back (self-attention ``linear_0`` = [q; k; v], cross-
attention ``linear_1`` = [k; v]; Whisper's ``k_proj`` has no bias), dequantises int8 weights,
upcasts to float32 and writes a Hugging Face model directory (weights as safetensors, config,
generation config, processor) into the cache, keyed by the source weights hash, so the next
load is a plain ``from_pretrained``.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import BackendError, InputFileError, require
from asr_audit.models.cache import weights_hash
from asr_audit.paths import cache_dir, publish_dir

_DTYPES = (np.float32, np.int8, np.int16, np.int32, np.float16, None)  # None: bfloat16
_SUPPORTED_VERSIONS = (5, 6)
_GELU = 3  # ctranslate2 ActivationType::GELU
CONVERTER_REVISION = "1"  # bump to invalidate cached conversions and the cache keys of their results
CONVERTER_VERSION = f"whisper_convert/{CONVERTER_REVISION}"  # recorded in the identity of rebuilt backends


@contextmanager
def quiet_loading(transformers: Any) -> Iterator[None]:
    """transformers' own progress bars ("Loading weights", "Writing model shards") off while a model
    loads or is saved, so they do not interleave with asr-audit's progress display; the previous
    setting comes back after."""
    hf_logging = transformers.utils.logging
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


@dataclass(frozen=True, slots=True)
class Ct2Variable:
    """Where one named array lives inside ``model.bin``."""

    name: str
    shape: tuple[int, ...]
    dtype_id: int
    offset: int
    n_bytes: int


@dataclass(frozen=True, slots=True)
class Ct2Index:
    """The header of a ``model.bin``: spec name, revision, variables and aliases."""

    path: Path
    spec: str
    revision: int
    variables: dict[str, Ct2Variable]
    aliases: dict[str, str]

    def shape(self, name: str) -> tuple[int, ...]:
        return self.variables[self.aliases.get(name, name)].shape


def read_ct2_index(path: str | Path) -> Ct2Index:
    """Parse the header of a CTranslate2 ``model.bin`` without reading the array data."""
    path = Path(path)

    def bad(problem: str) -> InputFileError:
        return InputFileError(path, problem, "re-download or re-convert the CTranslate2 model")

    try:
        size = path.stat().st_size
        fh = open(path, "rb")
    except OSError as exc:
        raise InputFileError(path, f"cannot open ({exc.strerror})", "check the model directory") from exc
    with fh:

        def take(fmt: str) -> int:
            raw = fh.read(struct.calcsize(fmt))
            if len(raw) != struct.calcsize(fmt):
                raise bad("truncated header")
            return int(struct.unpack("<" + fmt, raw)[0])

        def text() -> str:
            n = take("H")
            raw = fh.read(n)
            if len(raw) != n or not raw.endswith(b"\0"):
                raise bad("corrupt string in header")
            return raw[:-1].decode("utf-8")

        version = take("I")
        if version not in _SUPPORTED_VERSIONS:
            raise bad(f"unsupported CTranslate2 binary version {version} (supported: {_SUPPORTED_VERSIONS})")
        spec, revision = text(), take("I")
        variables: dict[str, Ct2Variable] = {}
        for _ in range(take("I")):
            name = text()
            shape = tuple(take("I") for _ in range(take("B")))
            dtype_id, n_bytes = take("B"), take("I")
            offset = fh.tell()
            if offset + n_bytes > size:
                raise bad(f"variable {name} runs past the end of the file (truncated download or bad join?)")
            variables[name] = Ct2Variable(name, shape, dtype_id, offset, n_bytes)
            fh.seek(n_bytes, os.SEEK_CUR)
        aliases = {}
        for _ in range(take("I")):
            alias = text()
            aliases[alias] = text()
        if fh.tell() != size:
            raise bad(f"{size - fh.tell()} unexpected trailing bytes")
    return Ct2Index(path, spec, revision, variables, aliases)


def load_ct2_array(index: Ct2Index, name: str) -> np.ndarray:
    """One variable as a numpy array (aliases resolved, bfloat16 widened to float32)."""
    var = index.variables[index.aliases.get(name, name)]
    with open(index.path, "rb") as fh:
        fh.seek(var.offset)
        raw = fh.read(var.n_bytes)
    if var.dtype_id >= len(_DTYPES):
        raise InputFileError(index.path, f"variable {name} has unknown dtype id {var.dtype_id}", "re-convert the model")
    dtype = _DTYPES[var.dtype_id]
    if dtype is None:  # bfloat16: the high half of a float32
        bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(var.shape)
    return np.frombuffer(raw, dtype=dtype).reshape(var.shape)


def _scalar(index: Ct2Index, name: str, default: int) -> int:
    return int(load_ct2_array(index, name).reshape(-1)[0]) if name in index.variables else default


def _float_weight(index: Ct2Index, name: str) -> np.ndarray:
    """A weight as float32, dequantising int8/int16 with its ``weight_scale``."""
    arr = load_ct2_array(index, name)
    if arr.dtype in (np.int8, np.int16):
        scale = load_ct2_array(index, name.removesuffix("weight") + "weight_scale").astype(np.float32)
        return arr.astype(np.float32) / scale.reshape((-1,) + (1,) * (arr.ndim - 1))
    return arr.astype(np.float32)


def _count_layers(index: Ct2Index, stack: str) -> int:
    n = 0
    while f"{stack}/layer_{n}/ffn/linear_0/weight" in index.variables:
        n += 1
    return n


def whisper_state_dict(index: Ct2Index) -> dict[str, np.ndarray]:
    """Map CTranslate2 Whisper variables onto ``WhisperForConditionalGeneration`` names."""
    if index.spec != "WhisperSpec":
        raise InputFileError(index.path, f"is a {index.spec}, not a Whisper model", "use a CTranslate2 Whisper model")
    w = lambda name: _float_weight(index, name)  # noqa: E731
    out: dict[str, np.ndarray] = {}

    def linear(dst: str, src: str) -> None:
        out[f"{dst}.weight"] = w(f"{src}/weight")
        out[f"{dst}.bias"] = w(f"{src}/bias")

    def norm(dst: str, src: str) -> None:
        out[f"{dst}.weight"] = w(f"{src}/gamma")
        out[f"{dst}.bias"] = w(f"{src}/beta")

    def split(dst: str, src: str, names: tuple[str, ...]) -> None:
        weight, bias = w(f"{src}/weight"), w(f"{src}/bias")
        for i, name in enumerate(names):
            rows = slice(i * weight.shape[0] // len(names), (i + 1) * weight.shape[0] // len(names))
            out[f"{dst}.{name}.weight"] = weight[rows]
            if name != "k_proj":  # Whisper's key projection has no bias (CT2 stores zeros)
                out[f"{dst}.{name}.bias"] = bias[rows]

    for part in ("conv1", "conv2"):
        linear(f"model.encoder.{part}", f"encoder/{part}")
    out["model.encoder.embed_positions.weight"] = w("encoder/position_encodings/encodings")
    for i in range(_count_layers(index, "encoder")):
        dst, src = f"model.encoder.layers.{i}", f"encoder/layer_{i}"
        split(f"{dst}.self_attn", f"{src}/self_attention/linear_0", ("q_proj", "k_proj", "v_proj"))
        linear(f"{dst}.self_attn.out_proj", f"{src}/self_attention/linear_1")
        norm(f"{dst}.self_attn_layer_norm", f"{src}/self_attention/layer_norm")
        linear(f"{dst}.fc1", f"{src}/ffn/linear_0")
        linear(f"{dst}.fc2", f"{src}/ffn/linear_1")
        norm(f"{dst}.final_layer_norm", f"{src}/ffn/layer_norm")
    norm("model.encoder.layer_norm", "encoder/layer_norm")
    out["model.decoder.embed_tokens.weight"] = w("decoder/embeddings/weight")
    out["model.decoder.embed_positions.weight"] = w("decoder/position_encodings/encodings")
    for i in range(_count_layers(index, "decoder")):
        dst, src = f"model.decoder.layers.{i}", f"decoder/layer_{i}"
        split(f"{dst}.self_attn", f"{src}/self_attention/linear_0", ("q_proj", "k_proj", "v_proj"))
        linear(f"{dst}.self_attn.out_proj", f"{src}/self_attention/linear_1")
        norm(f"{dst}.self_attn_layer_norm", f"{src}/self_attention/layer_norm")
        split(f"{dst}.encoder_attn", f"{src}/attention/linear_0", ("q_proj",))
        split(f"{dst}.encoder_attn", f"{src}/attention/linear_1", ("k_proj", "v_proj"))
        linear(f"{dst}.encoder_attn.out_proj", f"{src}/attention/linear_2")
        norm(f"{dst}.encoder_attn_layer_norm", f"{src}/attention/layer_norm")
        linear(f"{dst}.fc1", f"{src}/ffn/linear_0")
        linear(f"{dst}.fc2", f"{src}/ffn/linear_1")
        norm(f"{dst}.final_layer_norm", f"{src}/ffn/layer_norm")
    norm("model.decoder.layer_norm", "decoder/layer_norm")
    return out


def _special_ids(tokenizer_json: Path) -> dict[str, int]:
    tokens = json.loads(tokenizer_json.read_text())["added_tokens"]
    return {t["content"]: int(t["id"]) for t in tokens}


def whisper_config(index: Ct2Index, model_dir: Path):  # noqa: ANN201 - transformers.WhisperConfig
    """A ``WhisperConfig`` from the array shapes plus the CT2 ``config.json``."""
    transformers = require("transformers", "torch")
    act = _scalar(index, "decoder/activation", _GELU)
    if act != _GELU:
        raise InputFileError(index.path, f"uses activation id {act}, not GELU", "this is not an OpenAI Whisper model")
    ct2_cfg = json.loads((model_dir / "config.json").read_text()) if (model_dir / "config.json").is_file() else {}
    special = _special_ids(model_dir / "tokenizer.json")
    vocab, d_model = index.shape("decoder/embeddings/weight")
    eot = special["<|endoftext|>"]
    return transformers.WhisperConfig(
        vocab_size=vocab,
        num_mel_bins=index.shape("encoder/conv1/weight")[1],
        d_model=d_model,
        encoder_layers=_count_layers(index, "encoder"),
        decoder_layers=_count_layers(index, "decoder"),
        encoder_attention_heads=_scalar(index, "encoder/num_heads", d_model // 64),
        decoder_attention_heads=_scalar(index, "decoder/num_heads", d_model // 64),
        encoder_ffn_dim=index.shape("encoder/layer_0/ffn/linear_0/weight")[0],
        decoder_ffn_dim=index.shape("decoder/layer_0/ffn/linear_0/weight")[0],
        max_source_positions=index.shape("encoder/position_encodings/encodings")[0],
        max_target_positions=index.shape("decoder/position_encodings/encodings")[0],
        decoder_start_token_id=special["<|startoftranscript|>"],
        bos_token_id=eot,
        eos_token_id=eot,
        pad_token_id=eot,
        suppress_tokens=list(ct2_cfg.get("suppress_ids", [])),
        begin_suppress_tokens=list(ct2_cfg.get("suppress_ids_begin", [220, eot])),
        tie_word_embeddings=True,
    )


def _generation_config(config, special: dict[str, int], ct2_cfg: dict):  # noqa: ANN001, ANN202
    transformers = require("transformers", "torch")
    multilingual = config.vocab_size >= 51865
    lang_to_id = {t: i for t, i in special.items() if i in set(ct2_cfg.get("lang_ids", []))} if multilingual else {}
    return transformers.GenerationConfig(
        decoder_start_token_id=config.decoder_start_token_id,
        bos_token_id=config.bos_token_id,
        eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id,
        suppress_tokens=config.suppress_tokens,
        begin_suppress_tokens=config.begin_suppress_tokens,
        no_timestamps_token_id=special.get("<|notimestamps|>"),
        is_multilingual=multilingual,
        lang_to_id=lang_to_id,
        task_to_id={"transcribe": special["<|transcribe|>"], "translate": special["<|translate|>"]},
        alignment_heads=ct2_cfg.get("alignment_heads"),
        max_length=config.max_target_positions,
    )


def export_hf_whisper(ct2_dir: str | Path, out_dir: str | Path) -> Path:
    """Convert a CTranslate2 Whisper directory into a Hugging Face one (``from_pretrained``-able)."""
    torch = require("torch", "torch")
    transformers = require("transformers", "torch")
    ct2_dir, out_dir = Path(ct2_dir), Path(out_dir)
    index = read_ct2_index(ct2_dir / "model.bin")
    config = whisper_config(index, ct2_dir)
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in whisper_state_dict(index).items()}
    with torch.device("meta"):
        model = transformers.WhisperForConditionalGeneration(config)
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    missing = [m for m in missing if m != "proj_out.weight"]
    if missing or unexpected:
        raise BackendError(
            f"{ct2_dir}: conversion mismatch (missing {missing[:3]}, unexpected {unexpected[:3]}); fix: report this model"
        )
    model.tie_weights()
    ct2_cfg = json.loads((ct2_dir / "config.json").read_text()) if (ct2_dir / "config.json").is_file() else {}
    model.generation_config = _generation_config(config, _special_ids(ct2_dir / "tokenizer.json"), ct2_cfg)
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    with quiet_loading(transformers):
        model.save_pretrained(out_dir, safe_serialization=True)
    eot = "<|endoftext|>"
    tokenizer = transformers.WhisperTokenizerFast(
        tokenizer_file=str(ct2_dir / "tokenizer.json"), bos_token=eot, eos_token=eot, unk_token=eot, pad_token=eot
    )
    feature_extractor = transformers.WhisperFeatureExtractor(feature_size=config.num_mel_bins)
    transformers.WhisperProcessor(feature_extractor=feature_extractor, tokenizer=tokenizer).save_pretrained(out_dir)
    return out_dir


def converted_whisper_dir(ct2_dir: str | Path) -> Path:
    """The cached Hugging Face conversion of ``ct2_dir``, converting on first use.

    The cache entry is ``<cache>/converted/whisper-<source hash>-r<revision>``; it is written
    to a temporary sibling and renamed, so an interrupted conversion never leaves a half entry.
    """
    ct2_dir = Path(ct2_dir)
    source_hash = weights_hash([ct2_dir / "model.bin", ct2_dir / "tokenizer.json"])
    target = cache_dir() / "converted" / f"whisper-{source_hash}-r{CONVERTER_REVISION}"
    if (target / "model.safetensors").is_file() and (target / "config.json").is_file():
        return target
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        export_hf_whisper(ct2_dir, tmp)
        publish_dir(tmp, target, lambda d: (d / "model.safetensors").is_file() and (d / "config.json").is_file())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
