"""What a probe asks of a loaded backend beyond transcription, in the one form every place that runs a model uses.

A local model handle (:class:`~asr_audit.probes.core.models.LocalModel`) and a Ray worker
(:class:`~asr_audit.runner.ray_worker.ModelWorker`) call these same functions on their backend, so
a probe's numbers do not depend on where its models run:

* :func:`compute_scores`: teacher-forced scores of one chunk of rows (the lift probe);
* :func:`forced_rows`: greedy decoding with end-of-text banned for some steps after the plain
  transcript (the continuation probe), through :func:`forced_decoder`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from asr_audit.errors import AuditError, BackendError, ConfigError, MissingExtraError, require
from asr_audit.models.base import TokenScores
from asr_audit.models.whisper_common import WHISPER_MAX_NEW_TOKENS, check_audios


def compute_scores(
    backend: Any, audios: Sequence[np.ndarray], prefixes: Sequence[str], targets: Sequence[str]
) -> tuple[list[TokenScores | str], float]:
    """``backend.score`` of one chunk of rows and the compute seconds: the whole chunk in one call,
    and where that fails, row by row (a failing row gives its error text, the others their scores).
    A missing extra or a configuration problem raises. The one scoring computation: a local
    model handle (:class:`~asr_audit.probes.core.models.LocalModel`) and a Ray worker both run it."""
    try:
        t0 = time.perf_counter()
        got: list[TokenScores | str] = list(backend.score(list(audios), list(prefixes), list(targets)))
        return got, time.perf_counter() - t0
    except (MissingExtraError, ConfigError):
        raise
    except AuditError as exc:
        if len(audios) == 1:
            return [" ".join(str(exc).split())], 0.0
    out: list[TokenScores | str] = []
    seconds = 0.0
    for x, p, t in zip(audios, prefixes, targets):  # isolate the failing row(s)
        try:
            t0 = time.perf_counter()
            out.append(backend.score([x], [p], [t])[0])
            seconds += time.perf_counter() - t0
        except AuditError as exc:
            out.append(" ".join(str(exc).split()))
    return out, seconds


def forced_decoder(backend: Any) -> Any:
    """A callable ``(audios, extra_tokens) -> [(plain, forced)]`` for ``backend``, or :class:`BackendError`
    saying why it cannot decode with end-of-text banned."""
    if callable(getattr(backend, "transcribe_forced", None)):
        return backend.transcribe_forced
    needed = ("torch_model", "tokenizer", "feature_extractor", "prompt", "eot")
    if all(hasattr(backend, a) for a in needed):
        return lambda audios, extra: [_whisper_forced(backend, a, extra) for a in audios]
    raise BackendError(
        f"backend {backend.spec!r} cannot decode with end-of-text banned (forced continuation "
        "needs a PyTorch Whisper backend: hf:<model>, whisper-tiny.en-pt, whisper-base-pt); "
        "fix: choose one of those"
    )


def _whisper_forced(backend: Any, audio: np.ndarray, extra: int) -> tuple[str, str]:
    """Greedy decode of one clip; after the first end-of-text, ban it for ``extra`` steps."""

    torch = require("torch", "torch")
    clip = check_audios(backend.spec, [audio], getattr(backend, "max_duration", None))[0]
    fe = backend.feature_extractor
    feats = fe([clip], sampling_rate=fe.sampling_rate, return_tensors="np").input_features
    model = backend.torch_model
    device = next(model.parameters()).device
    suppress = list(getattr(backend, "suppress", []) or [])
    begin = list(getattr(backend, "begin_suppress", []) or [])
    eot = int(backend.eot)
    limit = min(WHISPER_MAX_NEW_TOKENS, int(getattr(backend, "max_positions", 448)) - len(backend.prompt) - 1)
    cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    out: list[int] = []
    plain_len: int | None = None
    with torch.inference_mode():
        encode = getattr(backend, "_encoder_states", None)
        if callable(encode):  # PyTorch Whisper backends memoize encoder states by audio content
            enc = encode([clip])
        else:
            x = torch.from_numpy(np.ascontiguousarray(feats)).to(device, dtype=model.dtype)
            enc = model.model.encoder(x).last_hidden_state
        cur, past = torch.tensor([list(backend.prompt)], device=device), None
        for step in range(limit):
            res = model(encoder_outputs=(enc,), decoder_input_ids=cur, use_cache=True, **{cache_kw: past})
            logits = res.logits[0, -1].float()
            if suppress:
                logits[suppress] = -np.inf
            if step == 0 and begin:
                logits[begin] = -np.inf
            nxt = int(logits.argmax())
            if nxt == eot and plain_len is None:
                plain_len = len(out)
            if plain_len is not None and len(out) < plain_len + extra:
                logits[eot] = -np.inf
                nxt = int(logits.argmax())
            if nxt == eot or (plain_len is not None and len(out) >= plain_len + 2 * extra):
                break
            out.append(nxt)
            past, cur = getattr(res, cache_kw), torch.tensor([[nxt]], device=device)
    plain = out[: plain_len if plain_len is not None else len(out)]
    dec = backend.tokenizer.decode
    return dec(plain, skip_special_tokens=True).strip(), dec(out, skip_special_tokens=True).strip()


def forced_rows(backend: Any, audios: Sequence[np.ndarray], extra_tokens: int) -> list[tuple[str, str] | str]:
    """``(plain, forced)`` of each clip (one decode each), or the error text of a clip that failed. The
    one forced-continuation computation: a local model handle
    (:class:`~asr_audit.probes.core.models.LocalModel`) and a Ray worker both run it."""
    decode = forced_decoder(backend)
    out: list[tuple[str, str] | str] = []
    for x in audios:
        try:
            got = decode([x], extra_tokens)[0]
        except AuditError as exc:
            out.append(" ".join(str(exc).split()))
            continue
        out.append((str(got[0]), str(got[1])))
    return out
