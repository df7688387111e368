"""Whisper cross-attention forced alignment (dynamic time warping over attention weights).

The method of OpenAI Whisper's word timestamps (``whisper/timing.py``), applied to a *given*
transcript instead of the model's own output:

1. teacher-force ``prompt + transcript tokens + <|endoftext|>`` through the decoder; each
   whitespace token of the transcript is tokenized on its own with one leading space, so every
   text token belongs to exactly one transcript token;
2. capture the pre-softmax cross-attention scores of the model's *alignment heads* (the
   ``alignment_heads`` of its generation config; when it has none, every head of the upper half
   of the decoder layers), keep the encoder frames that hold audio (20 ms each), softmax over
   them, standardize each frame across tokens, median-filter along time (width 7) and average
   the heads;
3. DTW over (text token x frame) of the negated matrix gives a monotonic path; a token starts at
   the frame where the path first reaches the row that *predicts* it, and a word spans from its
   first token's start to the next word's start (the last word ends where ``<|endoftext|>`` is
   predicted), so consecutive words touch;
4. the word's ``score`` is the mean teacher-forced log-probability of its tokens;
5. spans are trimmed to the frames above the clip's speech-energy threshold
   (:func:`asr_audit.align.energy.trim_to_speech`): DTW starts the first word at frame 0 and
   lets words run into the pauses after them.

Measured on three LibriVox clips (tests/align), Whisper tiny.en's boundaries lie a median
0.08-0.14 s from PocketSphinx's, Whisper's mostly later.

Attention is computed by hooks from the layer's own ``q_proj``/``k_proj``, so it works whatever
attention implementation (eager, sdpa) the model was loaded with. All-uppercase transcripts
(LibriSpeech style) are lower-cased before tokenization: Whisper rarely writes all caps and the
attention of unlikely tokens is diffuse. Clips longer than 30 s raise an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from asr_audit.align.energy import trim_to_speech
from asr_audit.align.records import AlignerIdentity, AlignmentError, WordTiming, check_timings
from asr_audit.errors import ConfigError, require
from asr_audit.models.base import SITES, load_backend, require_capability

SAMPLE_RATE = 16_000
FRAME_SECONDS = 0.02  # one encoder frame: two 10 ms mel frames
MAX_SECONDS = 30.0
MEDIAN_WIDTH = 7
REVISION = "1"  # bump when the method changes results
DEFAULT_MODEL = "whisper-tiny.en-pt"


def median_filter(x: np.ndarray, width: int) -> np.ndarray:
    """Median over a sliding window of odd ``width`` along the last axis (reflect padding).

    >>> median_filter(np.array([1.0, 9.0, 1.0, 1.0, 5.0]), 3).tolist()
    [9.0, 1.0, 1.0, 1.0, 1.0]
    """
    if width <= 1 or x.shape[-1] < width // 2 + 1:
        return x
    pad = width // 2
    padded = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)], mode="reflect")
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, width, axis=-1), axis=-1)


def dtw_path(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-cost monotonic path through ``cost`` (rows x columns) from (0, 0) to the end.

    Steps are diagonal, down or right, with Whisper's tie-breaking; computed by anti-diagonals.

    >>> rows, cols = dtw_path(np.array([[0.0, 0.0, 9.0], [9.0, 9.0, 0.0]]))
    >>> rows.tolist(), cols.tolist()
    ([0, 0, 1], [0, 1, 2])
    """
    n, m = cost.shape
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    trace = np.full((n + 1, m + 1), -1, dtype=np.int8)
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        j = d - i
        c0, c1, c2 = acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1]
        t = np.where((c0 < c1) & (c0 < c2), 0, np.where((c1 < c0) & (c1 < c2), 1, 2))
        acc[i, j] = cost[i - 1, j - 1] + np.choose(t, [c0, c1, c2])
        trace[i, j] = t
    trace[0, :] = 2
    trace[:, 0] = 1
    i, j = n, m
    rows, cols = [], []
    while i > 0 or j > 0:
        rows.append(i - 1)
        cols.append(j - 1)
        t = trace[i, j]
        if t == 0:
            i, j = i - 1, j - 1
        elif t == 1:
            i -= 1
        else:
            j -= 1
    r, c = np.array(rows[::-1]), np.array(cols[::-1])
    keep = (r >= 0) & (c >= 0)
    return r[keep], c[keep]


def alignment_heads(model: Any) -> list[tuple[int, int]]:
    """``(layer, head)`` pairs: the generation config's alignment heads, else the upper half's heads."""
    heads = getattr(getattr(model, "generation_config", None), "alignment_heads", None)
    if heads:
        return [(int(layer), int(head)) for layer, head in heads]
    cfg = model.config
    n_layers, n_heads = int(cfg.decoder_layers), int(cfg.decoder_attention_heads)
    return [(layer, h) for layer in range(n_layers // 2, n_layers) for h in range(n_heads)]


class WhisperAligner:
    """Cross-attention DTW alignment with a PyTorch ``WhisperForConditionalGeneration``.

    Built from its parts (model, tokenizer, feature extractor, prompt token ids) so that any
    Whisper works; :meth:`from_backend` takes them from a torch backend of ``asr_audit.models``.
    """

    name = "whisper"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        feature_extractor: Any,
        prompt: Sequence[int],
        *,
        model_name: str,
        weights_version: str,
        eot: int | None = None,
    ) -> None:
        self.torch_model = model
        self.tokenizer = tokenizer
        self.feature_extractor = feature_extractor
        self.prompt = list(prompt)
        self.model_name = model_name
        self.weights_version = weights_version
        self.eot = int(eot if eot is not None else tokenizer.convert_tokens_to_ids("<|endoftext|>"))
        self.heads = alignment_heads(model)
        self._source = "alignment-heads" if getattr(model.generation_config, "alignment_heads", None) else "upper-half"

    @classmethod
    def from_backend(cls, backend: Any) -> WhisperAligner:
        """Use a loaded torch Whisper backend (it needs ``torch_model``, ``tokenizer``, ``feature_extractor``, ``prompt``)."""
        missing = [a for a in ("torch_model", "tokenizer", "feature_extractor", "prompt") if not hasattr(backend, a)]
        if missing:
            raise ConfigError(
                f"backend {getattr(backend, 'spec', backend)!r} is not a PyTorch Whisper model "
                f"(lacks {', '.join(missing)}); fix: use e.g. whisper-tiny.en-pt or hf:<whisper dir>"
            )
        ident = backend.identity()
        return cls(
            backend.torch_model,
            backend.tokenizer,
            backend.feature_extractor,
            backend.prompt,
            model_name=backend.spec,
            weights_version=ident.weights_hash,
            eot=getattr(backend, "eot", None),
        )

    @classmethod
    def load(cls, model: str = DEFAULT_MODEL) -> WhisperAligner:
        """Load the torch Whisper backend named by the model spec ``model`` (``whisper-tiny.en-pt``, ``hf:DIR``)."""

        backend = load_backend(model)
        require_capability(backend, SITES)
        return cls.from_backend(backend)

    def identity(self) -> AlignerIdentity:
        version = f"{self.weights_version}+{self._source}+median{MEDIAN_WIDTH}+r{REVISION}"
        return AlignerIdentity(self.name, self.model_name, version)

    # ------------------------------------------------------------------ internals
    def _token_ids(self, transcript: str) -> list[list[int]]:
        text = transcript.lower() if transcript.isupper() else transcript
        return [list(self.tokenizer.encode(" " + tok, add_special_tokens=False)) for tok in text.split()]

    def _attention(self, samples: np.ndarray, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Cross-attention scores ``[heads, tokens, 1500]`` and log-probs ``[tokens, vocab]``."""
        torch = require("torch", "torch")
        model = self.torch_model
        layers = sorted({layer for layer, _ in self.heads})
        captured: dict[int, Any] = {}

        def make_hook(layer: int):  # noqa: ANN202
            def hook(module, args, kwargs):  # noqa: ANN001, ANN202
                hidden = args[0] if args else kwargs["hidden_states"]
                states = kwargs.get("key_value_states", args[1] if len(args) > 1 else None)
                if states is None:
                    return None
                n_heads = module.num_heads
                q = (module.q_proj(hidden) * module.scaling).view(*hidden.shape[:2], n_heads, -1).transpose(1, 2)
                k = module.k_proj(states).view(states.shape[0], -1, n_heads, q.shape[-1]).transpose(1, 2)
                captured[layer] = (q @ k.transpose(-1, -2))[0].float()
                return None

            return hook

        decoder_layers = model.model.decoder.layers
        handles = [
            decoder_layers[layer].encoder_attn.register_forward_pre_hook(make_hook(layer), with_kwargs=True)
            for layer in layers
        ]
        try:
            feats = self.feature_extractor([samples], sampling_rate=SAMPLE_RATE, return_tensors="np").input_features
            device = next(model.parameters()).device
            x = torch.from_numpy(np.ascontiguousarray(feats)).to(device, dtype=model.dtype)
            seq = torch.tensor([ids], device=device)
            with torch.inference_mode():
                logits = model(input_features=x, decoder_input_ids=seq).logits[0].float()
                logp = torch.log_softmax(logits, dim=-1)
        finally:
            for h in handles:
                h.remove()
        if set(captured) != set(layers):
            raise AlignmentError("cross-attention hooks did not fire; the model's decoder layout is not Whisper's")
        qk = torch.stack([captured[layer][head] for layer, head in self.heads]).cpu().numpy()
        return qk, logp.cpu().numpy()

    def align(self, samples: np.ndarray, transcript: str) -> tuple[WordTiming, ...]:
        """One :class:`WordTiming` per whitespace token of ``transcript`` (16 kHz mono float32 audio)."""
        x = np.asarray(samples, dtype=np.float32)
        if x.ndim != 1 or x.size == 0:
            raise AlignmentError(f"audio must be non-empty mono samples, got shape {x.shape}")
        duration = x.size / SAMPLE_RATE
        if duration > MAX_SECONDS + 1e-6:
            raise AlignmentError(
                f"clip lasts {duration:.1f} s; Whisper aligns at most {MAX_SECONDS:g} s; "
                "fix: cut the clip or use --aligner sphinx"
            )
        words = transcript.split()
        if not words:
            raise AlignmentError("the transcript is empty")
        word_ids = self._token_ids(transcript)
        text_ids = [t for w in word_ids for t in w]
        ids = self.prompt + text_ids + [self.eot]
        limit = int(getattr(self.torch_model.config, "max_target_positions", 448))
        if len(ids) > limit:
            raise AlignmentError(f"transcript is {len(text_ids)} tokens, more than Whisper's {limit}-token window")
        qk, logp = self._attention(x, ids)
        n_frames = max(1, min(qk.shape[-1], int(np.ceil(x.size / (SAMPLE_RATE * FRAME_SECONDS)))))
        w = qk[:, :, :n_frames]
        w = np.exp(w - w.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        first = len(self.prompt) - 1  # the row that predicts the first text token
        w = w[:, first : first + len(text_ids) + 1]  # rows predicting each text token, then <|endoftext|>
        std = w.std(axis=-2, keepdims=True)
        w = (w - w.mean(axis=-2, keepdims=True)) / np.where(std > 0, std, 1.0)
        matrix = median_filter(w, MEDIAN_WIDTH).mean(axis=0)
        rows, cols = dtw_path(-matrix)
        jumps = np.concatenate([[True], np.diff(rows) > 0])
        starts = cols[jumps] * FRAME_SECONDS  # one per row: when the path reaches it
        bounds = np.concatenate([[0], np.cumsum([len(t) for t in word_ids])])
        out: list[WordTiming] = []
        cursor = 0.0
        for i, word in enumerate(words):
            a, b = int(bounds[i]), int(bounds[i + 1])
            start = min(max(float(starts[a]) if a < b else cursor, cursor), duration)
            end = min(max(float(starts[b]), start), duration)
            score = float(np.mean([logp[first + k, text_ids[k]] for k in range(a, b)])) if b > a else None
            out.append(WordTiming(word, round(start, 4), round(end, 4), score))
            cursor = out[-1].end
        result = trim_to_speech(tuple(out), x)
        check_timings(result, len(words), duration)
        return result
