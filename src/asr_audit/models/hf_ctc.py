"""``hf-ctc:<hub id or dir>`` — Hugging Face CTC models (wav2vec 2.0, HuBERT, WavLM, …).

Transcription is greedy CTC: argmax per frame over the model's valid output frames, repeats
merged, blanks (the pad token) dropped, the word delimiter turned into spaces (the tokenizer's
own ``decode``).

**Score definition.** A CTC model has no left-to-right token distribution, so
``-CTC(prefix + target) + CTC(prefix)`` is not meaningful (the prefix alone would have to
explain the whole clip). ``score`` instead uses the CTC *prefix probability*
``P(y_1..y_u... | audio)`` — the probability that the transcript *starts with* ``y_1..y_u``,
summed over everything after (:func:`~asr_audit.models.ctc_scoring.ctc_prefix_log_probs`).
Each target token gets ``log P(prefix + t_1..t_i ...) - log P(prefix + t_1..t_{i-1} ...)``, the
chain-rule analogue of seq2seq teacher forcing over the whole clip, so scores of a prefix and
its continuation add up like Whisper's. The complete-transcript likelihood (``-CTC loss``) is
:meth:`HFCTCBackend.log_likelihood`.

Tokenization: text is case-folded to the vocabulary's letter case and whitespace-collapsed;
``prefix + " " + target`` is tokenized as one string and the target's tokens are those after the
prefix's, so a non-empty prefix gives the target a leading word delimiter (``|``). Characters
missing from the vocabulary become the unknown token.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import BackendError, ConfigError, require
from asr_audit.models.base import (
    SCORE,
    SITES,
    TRANSCRIBE,
    BaseBackend,
    DecodeOptions,
    RuntimeOptions,
    TokenScores,
    register_backend,
)
from asr_audit.models.cache import weights_hash
from asr_audit.models.ctc_scoring import ctc_log_likelihood, ctc_prefix_log_probs
from asr_audit.models.hf import hf_weight_files, model_type, resolve_hf_dir
from asr_audit.models.whisper_common import check_audios, device_code, length_sorted_batches
from asr_audit.models.whisper_convert import quiet_loading
from asr_audit.models.whisper_torch import dtype_kwarg, torch_setup


def ctc_site_modules(model: Any) -> dict[str, Any]:
    """Hook-site name -> module for a transformer CTC model, in forward order.

    Names follow :mod:`asr_audit.mech.sites`: ``encoder.in`` (feature projection),
    ``encoder.layers.{L}.self_attn|mlp|out``, ``encoder.head`` (the CTC output projection).
    """
    base = model.base_model
    layers = getattr(getattr(base, "encoder", None), "layers", None) or []
    sites: dict[str, Any] = {}
    if hasattr(base, "feature_projection"):
        sites["encoder.in"] = base.feature_projection
    for i, layer in enumerate(layers):
        if hasattr(layer, "attention"):
            sites[f"encoder.layers.{i}.self_attn"] = layer.attention
        if hasattr(layer, "feed_forward"):
            sites[f"encoder.layers.{i}.mlp"] = layer.feed_forward
        sites[f"encoder.layers.{i}.out"] = layer
    if hasattr(model, "lm_head"):
        sites["encoder.head"] = model.lm_head
    return sites


class HFCTCBackend(BaseBackend):
    """A Hugging Face ``AutoModelForCTC`` + processor, greedy decoding, CTC prefix scoring."""

    capabilities = frozenset({TRANSCRIBE, SCORE, SITES})
    code_version = "hf-ctc/1"
    max_duration = None

    def __init__(
        self,
        model_dir: str | Path,
        spec: str,
        options: DecodeOptions,
        weights_hash_: str,
        *,
        device: str | None = None,
        batch_size: int = 8,
    ) -> None:
        _, transformers, self.device, dtype = torch_setup(
            spec, options, "CTC decoding here is greedy; fix: beam_size=1", device
        )
        super().__init__(spec, options, weights_hash_)
        self.dtype = str(dtype).removeprefix("torch.")
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        try:
            with quiet_loading(transformers):
                model = transformers.AutoModelForCTC.from_pretrained(str(model_dir), **dtype_kwarg(dtype))
                self.processor = transformers.AutoProcessor.from_pretrained(str(model_dir))
        except (OSError, ValueError) as exc:
            raise BackendError(
                f"{spec}: cannot load a CTC model from {model_dir} ({exc}); fix: check the model directory"
            ) from exc
        self.torch_model = model.to(self.device).eval()
        self.tokenizer = self.processor.tokenizer
        self.feature_extractor = self.processor.feature_extractor
        self.blank = int(
            model.config.pad_token_id if model.config.pad_token_id is not None else self.tokenizer.pad_token_id
        )
        letters = "".join(t for t in self.tokenizer.get_vocab() if len(t) == 1 and t.isalpha())
        self._case = (
            "upper"
            if letters and letters == letters.upper()
            else "lower"
            if letters and letters == letters.lower()
            else ""
        )
        self._sites = ctc_site_modules(self.torch_model)

    def identity_code(self) -> dict[str, str]:
        """Code version, the torch dtype the weights run in and the device kind when not the CPU.

        The batch size is not here: padding is masked, so a clip's outputs do not depend on it.
        """
        return {**super().identity_code(), "dtype": self.dtype, **device_code(self.device)}

    def sites(self) -> list[str]:
        """Hook-site names in forward order (``encoder.in``, ``encoder.layers.{L}.self_attn|mlp|out``, ``encoder.head``)."""
        return list(self._sites)

    def site_module(self, name: str) -> Any:
        if name not in self._sites:
            raise ConfigError(f"{self.spec} has no hook site {name!r}; valid e.g.: {', '.join(self.sites()[:4])}, ...")
        return self._sites[name]

    def _log_probs(self, clips: list[np.ndarray]) -> list[np.ndarray]:
        """Per-clip frame log-probabilities over the valid (unpadded) output frames."""
        torch = require("torch", "torch")
        if len(clips) > 1 and not getattr(self.feature_extractor, "return_attention_mask", False):
            # without an attention mask, zero padding changes the outputs: keep results batch-independent
            return [lp for c in clips for lp in self._log_probs([c])]
        sr = self.feature_extractor.sampling_rate
        inputs = self.feature_extractor(
            clips, sampling_rate=sr, return_tensors="pt", padding=True, return_attention_mask=True
        )
        mask = inputs.get("attention_mask")
        kwargs = {}
        if mask is not None and getattr(self.feature_extractor, "return_attention_mask", False):
            kwargs["attention_mask"] = mask.to(self.device)
        values = inputs["input_values"].to(self.device, dtype=self.torch_model.dtype)
        with torch.inference_mode():
            logits = self.torch_model(values, **kwargs).logits.float()
            logp = torch.log_softmax(logits, dim=-1).cpu().numpy().astype(np.float64)
            n_in = torch.tensor([len(c) for c in clips])
            n_out = self.torch_model._get_feat_extract_output_lengths(n_in).tolist()
        return [logp[i, : int(n)] for i, n in enumerate(n_out)]

    def _labels(self, text: str) -> list[int]:
        text = " ".join(text.split())
        text = text.upper() if self._case == "upper" else text.lower() if self._case == "lower" else text
        return list(self.tokenizer(text, add_special_tokens=False).input_ids) if text else []

    def _sorted_log_probs(self, clips: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
        """``(input index, frame log-probs)`` over length-sorted batches of ``batch_size``."""
        return [
            (i, lp)
            for rows in length_sorted_batches([len(c) for c in clips], self.batch_size)
            for i, lp in zip(rows, self._log_probs([clips[i] for i in rows]))
        ]

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        """Greedy CTC transcripts, computed in length-sorted batches, in input order."""
        clips = check_audios(self.spec, audios, self.max_duration)
        out = [""] * len(clips)
        for i, lp in self._sorted_log_probs(clips):
            out[i] = self.tokenizer.decode(lp.argmax(-1).tolist()).strip()
        return out

    def score(self, audios: Sequence[np.ndarray], prefixes: Sequence[str], targets: Sequence[str]) -> list[TokenScores]:
        """Per-token CTC prefix-probability log-ratios of each target (see the module docstring)."""
        if not len(audios) == len(prefixes) == len(targets):
            raise ConfigError(f"{self.spec}: score needs equal numbers of audios, prefixes and targets")
        clips = check_audios(self.spec, audios, self.max_duration)
        results: list[TokenScores] = [TokenScores((), ())] * len(clips)
        for i, lp in self._sorted_log_probs(clips):
            prefix, target = " ".join(prefixes[i].split()), " ".join(targets[i].split())
            head = self._labels(prefix)
            full = self._labels(f"{prefix} {target}" if prefix else target) if target else head
            tail = full[len(head) :]
            if not tail:
                continue
            cum = np.concatenate([[0.0], ctc_prefix_log_probs(lp, full, self.blank)])
            with np.errstate(invalid="ignore"):
                steps = np.diff(cum)[len(head) :]
            toks = tuple(self.tokenizer.convert_ids_to_tokens(tail))
            results[i] = TokenScores(toks, tuple(float(x) for x in steps))
        return results

    def log_likelihood(self, audios: Sequence[np.ndarray], texts: Sequence[str]) -> list[float]:
        """``log P(text | audio)`` of each complete transcript (= ``-CTC loss``, summed)."""
        clips = check_audios(self.spec, audios, self.max_duration)
        out = [0.0] * len(clips)
        for i, lp in self._sorted_log_probs(clips):
            out[i] = ctc_log_likelihood(lp, self._labels(texts[i]), self.blank)
        return out


def load_hf_ctc(arg: str, options: DecodeOptions, *, device: str | None = None, batch_size: int = 8) -> HFCTCBackend:
    """``hf-ctc:<arg>`` — a CTC model from the hub or a local directory."""
    model_dir = resolve_hf_dir(arg)
    if model_type(model_dir) == "whisper":
        raise BackendError(f"hf-ctc:{arg} is a Whisper model; fix: use hf:{arg}")
    return HFCTCBackend(
        model_dir,
        f"hf-ctc:{arg}",
        options,
        weights_hash(hf_weight_files(model_dir)),
        device=device,
        batch_size=batch_size,
    )


@register_backend(
    "hf-ctc",
    description="Hugging Face CTC model (wav2vec2, HuBERT, …), hub id or local dir, PyTorch",
    capabilities=[TRANSCRIBE, SCORE, SITES],
    extra="torch",
)
def _hf_ctc_factory(arg: str, options: DecodeOptions, runtime: RuntimeOptions | None = None) -> HFCTCBackend:
    return load_hf_ctc(arg, options, **(runtime or RuntimeOptions()).kwargs())
