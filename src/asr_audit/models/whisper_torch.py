"""PyTorch Whisper (``transformers.WhisperForConditionalGeneration``): greedy transcription,
teacher-forced scoring and named hook sites.

Decoding mirrors the CTranslate2 backend exactly so the two engines agree token for token:
prompt ``<|startoftranscript|>`` [+ ``<|lang|>`` + ``<|task|>``] + ``<|notimestamps|>``,
argmax at every step, the generation config's ``suppress_tokens`` always masked,
``begin_suppress_tokens`` masked at the first step, stop at ``<|endoftext|>`` or after
``min(max_new_tokens, 224)`` new tokens (the cap CTranslate2 and OpenAI's decoder apply).

**Scoring** (:meth:`TorchWhisperBackend.score`) returns, for every token of the target text,
``log p(token | audio, prompt, prefix tokens, earlier target tokens)`` under one teacher-forced
forward pass: the raw log-softmax over the whole vocabulary (no suppression), no end-of-text
token. Tokenization boundary: prefix and target are tokenized separately, each stripped and
given one leading space (Whisper writes every word, the first included, with its leading
space: `` And Mr. John``), so the target's first token starts a new word after the prefix.
An empty target gives empty scores.

**Hook sites** (:meth:`TorchWhisperBackend.sites`, :func:`whisper_site_modules`) name the
module whose forward output is the activation; when a module returns a tuple the activation is
its first element::

    encoder.layers.{L}.self_attn   encoder.layers.{L}.mlp   encoder.layers.{L}.out   encoder.out
    decoder.embed_tokens           decoder.layers.{L}.self_attn   decoder.layers.{L}.cross_attn
    decoder.layers.{L}.mlp         decoder.layers.{L}.out   decoder.out

(``out`` is the residual stream after layer ``L``; ``mlp`` is the output of ``fc2``;
``encoder.out`` / ``decoder.out`` follow the final layer norm.)
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import BackendError, ConfigError, require
from asr_audit.models.base import SCORE, SITES, TRANSCRIBE, BaseBackend, DecodeOptions, TokenScores
from asr_audit.models.whisper_common import (
    WHISPER_MAX_NEW_TOKENS,
    WHISPER_MAX_SECONDS,
    check_audios,
    device_code,
    length_sorted_batches,
    prompt_ids,
    resolve_device,
)
from asr_audit.models.whisper_convert import quiet_loading

# compute_type -> torch dtype; "default" is float16 on CUDA and float32 on the CPU
_DTYPES = {"default": "", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}


def torch_setup(spec: str, options: DecodeOptions, greedy_fix: str, device: str | None) -> tuple[Any, Any, str, Any]:
    """Shared checks of the PyTorch backends: greedy decoding, a supported dtype, the device.

    Returns ``(torch, transformers, resolved device, dtype)``; ``compute_type = "default"``
    resolves to float16 on CUDA and float32 on the CPU.
    """
    torch = require("torch", "torch")
    transformers = require("transformers", "torch")
    if options.beam_size != 1:
        raise ConfigError(f"{spec}: {greedy_fix}")
    if options.compute_type not in _DTYPES:
        raise ConfigError(
            f"{spec}: compute_type {options.compute_type!r} is not supported here; valid: {', '.join(_DTYPES)}"
        )
    resolved = resolve_device(device, torch.cuda.is_available)
    name = _DTYPES[options.compute_type] or ("float32" if resolved == "cpu" else "float16")
    return torch, transformers, resolved, getattr(torch, name)


def dtype_kwarg(dtype: Any) -> dict[str, Any]:
    """``from_pretrained``'s dtype keyword: ``dtype`` since transformers 5, ``torch_dtype`` before."""
    transformers = require("transformers", "torch")
    major = int(transformers.__version__.split(".")[0])
    return {"dtype": dtype} if major >= 5 else {"torch_dtype": dtype}


def whisper_site_modules(model: Any) -> dict[str, Any]:
    """Hook-site name -> ``torch.nn.Module`` for a ``WhisperForConditionalGeneration``, in forward order."""
    enc, dec = model.model.encoder, model.model.decoder
    sites: dict[str, Any] = {}
    for i, layer in enumerate(enc.layers):
        sites[f"encoder.layers.{i}.self_attn"] = layer.self_attn
        sites[f"encoder.layers.{i}.mlp"] = layer.fc2
        sites[f"encoder.layers.{i}.out"] = layer
    sites["encoder.out"] = enc.layer_norm
    sites["decoder.embed_tokens"] = dec.embed_tokens
    for i, layer in enumerate(dec.layers):
        sites[f"decoder.layers.{i}.self_attn"] = layer.self_attn
        sites[f"decoder.layers.{i}.cross_attn"] = layer.encoder_attn
        sites[f"decoder.layers.{i}.mlp"] = layer.fc2
        sites[f"decoder.layers.{i}.out"] = layer
    sites["decoder.out"] = dec.layer_norm
    return sites


# what TorchWhisperBackend._load sets from the weights (a lazy backend's first read of one loads them)
LOADED = tuple(
    "processor torch_model tokenizer feature_extractor suppress begin_suppress eot "
    "max_positions multilingual prompt _sites _cache_kw".split()
)


class EncoderHandoff:
    """Encoder states handed from one backend to the others that run the same encoder (the same
    weights, dtype and device: an organism and its control, whose training never touches the
    encoder), so a clip both transcribe is encoded once. A state one member computed waits here,
    keyed by audio content, until every other member has read it, then it is dropped; at most
    ``size`` states wait (the oldest is dropped first). A member reads the very tensor the other
    computed, so its outputs are those it would compute itself from the same batches."""

    def __init__(self, size: int = 128) -> None:
        self.size = size
        self.members: weakref.WeakSet[Any] = weakref.WeakSet()
        self.entries: dict[str, tuple[Any, set[int]]] = {}  # key -> (state, ids of members yet to read)

    def join(self, member: Any) -> None:
        self.members.add(member)

    def take(self, key: str, member: Any) -> Any | None:
        """The state of ``key`` another member left for ``member`` (``None`` if none waits)."""
        entry = self.entries.get(key)
        if entry is None or id(member) not in entry[1]:
            return None
        entry[1].discard(id(member))
        if not entry[1]:
            del self.entries[key]
        return entry[0]

    def offer(self, key: str, state: Any, member: Any) -> None:
        """Leave ``state`` (computed by ``member``) for every other member."""
        others = {id(m) for m in self.members if m is not member}
        if not others:
            return
        self.entries.pop(key, None)
        self.entries[key] = (state, others)
        while len(self.entries) > self.size:
            self.entries.pop(next(iter(self.entries)))


# shared-encoder key -> the hand-off of the live backends that declared it (see TorchWhisperBackend)
_HANDOFFS: weakref.WeakValueDictionary[str, EncoderHandoff] = weakref.WeakValueDictionary()


class _Loaded:
    """An attribute :meth:`TorchWhisperBackend._load` sets from the weights: reading it before they
    are loaded (a lazy backend) loads them; afterwards the instance's own value answers."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        obj._load()
        return obj.__dict__[self.name]


class TorchWhisperBackend(BaseBackend):
    """A Hugging Face Whisper model directory run with PyTorch (transcribe, score, sites)."""

    capabilities = frozenset({TRANSCRIBE, SCORE, SITES})
    code_version = "torch-whisper/1"
    max_duration = WHISPER_MAX_SECONDS
    # Declared, not defaulted: set only on the organism backends (asr_audit.organism.backend),
    # to the metadata of the delta file applied to the weights.
    organism_meta: dict[str, Any]

    def __init__(
        self,
        model_dir: str | Path,
        spec: str,
        options: DecodeOptions,
        weights_hash: str,
        *,
        device: str | None = None,
        batch_size: int = 8,
        converter: str | None = None,
        prepare: Callable[[Any], None] | None = None,
        lazy: bool = False,
        shared_encoder: str | None = None,
    ) -> None:
        """``converter``: the revision of the code that rebuilt these weights (``-pt``, organisms);
        ``prepare(model)``: run on the loaded torch model before it is used (an organism's delta).
        With ``lazy`` the weights are read on first use (any of :data:`LOADED` read): a run whose
        transcripts are all in the store never reads them. The identity does not depend on them.
        ``shared_encoder``: a key naming this model's encoder weights, promised identical in every
        backend that passes the same key (``prepare`` leaves the encoder alone); backends with the
        same key, dtype and device hand their encoder states to each other (:class:`EncoderHandoff`)."""
        torch, transformers, self.device, dtype = torch_setup(
            spec,
            options,
            "PyTorch Whisper backends decode greedily; fix: beam_size=1, or use the ct2 backend for beams",
            device,
        )
        super().__init__(spec, options, weights_hash)
        self.dtype = str(dtype).removeprefix("torch.")
        self.converter = converter
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self._pending: tuple[Any, Callable[[Any], None] | None] | None = (dtype, prepare)
        self._handoff: EncoderHandoff | None = None
        if shared_encoder is not None:
            key = f"{shared_encoder}|{self.device}|{self.dtype}"
            self._handoff = _HANDOFFS.get(key)
            if self._handoff is None:
                self._handoff = _HANDOFFS[key] = EncoderHandoff()
            self._handoff.join(self)
        if not lazy:
            self._load()

    def _load(self) -> None:
        """Read the weights, run ``prepare`` on them, and set the attributes of :data:`LOADED`."""
        if self._pending is None:
            return
        dtype, prepare = self._pending
        transformers = require("transformers", "torch")
        spec, model_dir = self.spec, self.model_dir
        try:
            with quiet_loading(transformers):
                model = transformers.WhisperForConditionalGeneration.from_pretrained(
                    str(model_dir), **dtype_kwarg(dtype)
                )
                processor = transformers.WhisperProcessor.from_pretrained(str(model_dir))
        except (OSError, ValueError) as exc:
            raise BackendError(
                f"{spec}: cannot load a Whisper model from {model_dir} ({exc}); fix: check the model directory"
            ) from exc
        model = model.to(self.device).eval()
        if prepare is not None:
            prepare(model)
        self.processor = processor
        self.torch_model = model
        self.tokenizer = self.processor.tokenizer
        self.feature_extractor = self.processor.feature_extractor
        gen = model.generation_config
        cfg = model.config
        self.suppress = list(getattr(gen, "suppress_tokens", None) or cfg.suppress_tokens or [])
        self.begin_suppress = list(getattr(gen, "begin_suppress_tokens", None) or cfg.begin_suppress_tokens or [])
        self.eot = int(gen.eos_token_id if isinstance(gen.eos_token_id, int) else cfg.eos_token_id)
        self.max_positions = int(cfg.max_target_positions)
        self.multilingual = cfg.vocab_size >= 51865
        self.prompt = prompt_ids(spec, self._token_id, self.multilingual, self.options)
        self._sites = whisper_site_modules(self.torch_model)
        params = inspect.signature(self.torch_model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"  # transformers >= 5 renamed it
        self._pending = None

    def identity_code(self) -> dict[str, str]:
        """Code version, the torch dtype, the device kind when not the CPU (:func:`device_code`) and
        (for rebuilt weights) the converter revision. The batch size is not here: it does not
        change outputs (every clip is padded to 30 s alone; rows decode independently)."""
        code = {**super().identity_code(), "dtype": self.dtype, **device_code(self.device)}
        if self.converter is not None:
            code["converter"] = self.converter
        return code

    # ------------------------------------------------------------------ helpers
    def _token_id(self, token: str) -> int | None:
        tid = self.tokenizer.convert_tokens_to_ids(token)
        return (
            None
            if tid is None or tid == self.tokenizer.unk_token_id and token != self.tokenizer.unk_token
            else int(tid)
        )

    def _encode_text(self, text: str) -> list[int]:
        text = text.strip()
        return list(self.tokenizer.encode(" " + text, add_special_tokens=False)) if text else []

    ENCODER_MEMO_SIZE = 32  # encoder states kept by audio content (a silent waveform is encoded once per length)

    def _encoder_hooked(self) -> bool:
        """Whether any hook sits on the encoder (then its outputs must not be served from the memo)."""
        return any(m._forward_hooks or m._forward_pre_hooks for m in self.torch_model.model.encoder.modules())

    def _encoder_states(self, clips: list[np.ndarray]) -> Any:
        """Encoder outputs for ``clips``; unhooked encodings are memoized by audio content."""
        import hashlib

        torch = require("torch", "torch")
        memo: dict[str, Any] = self.__dict__.setdefault("_enc_memo", {})
        use_memo = not self._encoder_hooked()
        keys = [hashlib.sha1(np.ascontiguousarray(c, dtype=np.float32).tobytes()).hexdigest() for c in clips]
        handoff = self._handoff if use_memo and not torch.is_grad_enabled() else None
        if handoff is not None:  # states another backend with this encoder left for this one
            for k in keys:
                state = None if k in memo else handoff.take(k, self)
                if state is not None:
                    memo[k] = state
        todo = [i for i, k in enumerate(keys) if not (use_memo and k in memo)]
        fresh: dict[int, Any] = {}
        if todo:
            feats = self.feature_extractor(
                [clips[i] for i in todo], sampling_rate=self.feature_extractor.sampling_rate, return_tensors="np"
            ).input_features
            x = torch.from_numpy(np.ascontiguousarray(feats)).to(self.device, dtype=self.torch_model.dtype)
            states = self.torch_model.model.encoder(x).last_hidden_state
            if len(todo) == len(clips):
                out = states
            for j, i in enumerate(todo):
                fresh[i] = states[j]
        if todo and len(todo) == len(clips):
            result = out
        else:
            result = torch.stack([fresh[i] if i in fresh else memo[keys[i]] for i in range(len(clips))])
        if use_memo and not torch.is_grad_enabled():
            for i, state in fresh.items():
                memo[keys[i]] = state.detach()
                if handoff is not None:
                    handoff.offer(keys[i], memo[keys[i]], self)
            while len(memo) > self.ENCODER_MEMO_SIZE:
                memo.pop(next(iter(memo)))
        return result

    def sites(self) -> list[str]:
        """Every hook-site name of this model, in forward order (see the module docstring)."""
        return list(self._sites)

    def site_module(self, name: str) -> Any:
        """The ``torch.nn.Module`` whose output is site ``name``."""
        if name not in self._sites:
            raise ConfigError(f"{self.spec} has no hook site {name!r}; valid e.g.: {', '.join(self.sites()[:4])}, ...")
        return self._sites[name]

    def decoder_position_module(self) -> Any:
        """The decoder's position embedding (its call carries each forward's absolute token
        positions; interventions restricted to decoder positions read them there)."""
        return self.torch_model.model.decoder.embed_positions

    # ------------------------------------------------------------------ capabilities
    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        """Greedy transcripts, decoded in length-sorted batches of ``batch_size``, in input order."""
        clips = check_audios(self.spec, audios, self.max_duration)
        out = [""] * len(clips)
        for rows in length_sorted_batches([len(c) for c in clips], self.batch_size):
            for i, text in zip(rows, self._greedy([clips[i] for i in rows])):
                out[i] = text
        return out

    def _greedy(self, clips: list[np.ndarray]) -> list[str]:
        torch = require("torch", "torch")
        from transformers.modeling_outputs import BaseModelOutput

        n_new = min(self.options.max_new_tokens, WHISPER_MAX_NEW_TOKENS, self.max_positions - len(self.prompt))
        with torch.inference_mode():
            enc = BaseModelOutput(last_hidden_state=self._encoder_states(clips))
            n = len(clips)
            cur = torch.tensor([self.prompt] * n, device=self.device)
            done = torch.zeros(n, dtype=torch.bool, device=self.device)
            generated: list[Any] = []
            past = None
            suppress = torch.tensor(self.suppress, dtype=torch.long, device=self.device)
            begin = torch.tensor(self.begin_suppress, dtype=torch.long, device=self.device)
            for step in range(n_new):
                res = self.torch_model(
                    encoder_outputs=enc, decoder_input_ids=cur, use_cache=True, **{self._cache_kw: past}
                )
                logits = res.logits[:, -1, :].float()
                logits[:, suppress] = -np.inf
                if step == 0:
                    logits[:, begin] = -np.inf
                nxt = torch.where(done, torch.full_like(done, self.eot, dtype=torch.long), logits.argmax(-1))
                done |= nxt == self.eot
                generated.append(nxt)
                if bool(done.all()):
                    break
                past, cur = getattr(res, self._cache_kw), nxt[:, None]
        rows = torch.stack(generated, 1).tolist() if generated else [[] for _ in clips]
        return [self.tokenizer.decode(r[: self._stop(r)], skip_special_tokens=True).strip() for r in rows]

    def _stop(self, row: list[int]) -> int:
        return row.index(self.eot) if self.eot in row else len(row)

    def score(self, audios: Sequence[np.ndarray], prefixes: Sequence[str], targets: Sequence[str]) -> list[TokenScores]:
        """Teacher-forced per-token log-probs of each target (see the module docstring)."""
        torch = require("torch", "torch")
        if not len(audios) == len(prefixes) == len(targets):
            raise ConfigError(f"{self.spec}: score needs equal numbers of audios, prefixes and targets")
        clips = check_audios(self.spec, audios, self.max_duration)
        results: list[TokenScores] = [TokenScores((), ())] * len(clips)
        for rows in length_sorted_batches([len(c) for c in clips], self.batch_size):
            seqs, spans = [], []
            for i in rows:
                head = self.prompt + self._encode_text(prefixes[i])
                tail = self._encode_text(targets[i])
                if len(head) + len(tail) > self.max_positions:
                    raise BackendError(
                        f"{self.spec}: input {i}: prefix + target exceed {self.max_positions} tokens; fix: shorten them"
                    )
                seqs.append(head + tail)
                spans.append((len(head), tail))
            width = max(len(s) for s in seqs)
            ids = torch.tensor([s + [self.eot] * (width - len(s)) for s in seqs], device=self.device)
            with torch.inference_mode():
                enc = self._encoder_states([clips[i] for i in rows])
                logits = self.torch_model(encoder_outputs=(enc,), decoder_input_ids=ids).logits.float()
                logp = torch.log_softmax(logits, dim=-1)
            for b, (i, (start, tail)) in enumerate(zip(rows, spans)):
                if not tail:
                    continue
                pos = torch.arange(start - 1, start - 1 + len(tail), device=self.device)
                lp = logp[b, pos, torch.tensor(tail, device=self.device)].tolist()
                toks = tuple(self.tokenizer.decode([t]) for t in tail)
                results[i] = TokenScores(toks, tuple(float(x) for x in lp))
        return results


for _name in LOADED:  # class-level stand-ins until _load sets the instance's own values
    setattr(TorchWhisperBackend, _name, _Loaded(_name))
