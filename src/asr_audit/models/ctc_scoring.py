"""CTC probabilities in numpy: full-labelling log-likelihood and prefix log-probabilities.

For frame log-probabilities ``logp`` (``T x V``), blank id ``blank`` and labels ``l``:

* :func:`ctc_log_likelihood` is ``log P(l | x)``, the sum over all alignments that collapse to
  exactly ``l`` — the negative of PyTorch's ``ctc_loss(reduction="sum")``.
* :func:`ctc_prefix_log_probs` gives, for each ``u``, ``log P(l_1..l_u is a prefix of the
  labelling | x)`` (Graves 2008, the quantity prefix beam search ranks by). Differences of
  consecutive values are the per-token conditional log-probabilities that
  ``hf-ctc`` reports as its teacher-forced ``score``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NEG_INF = -np.inf


def _alphas(logp: np.ndarray, labels: Sequence[int], blank: int) -> tuple[np.ndarray, np.ndarray]:
    """Forward variables ``alpha[t, s]`` over the blank-extended labels, and that sequence."""
    logp = np.asarray(logp, dtype=np.float64)
    ext = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    ext[1::2] = np.asarray(labels, dtype=np.int64)
    n_states = ext.size
    # a label state may skip the preceding blank when it differs from the label two states back
    skip = np.zeros(n_states, dtype=bool)
    skip[3::2] = ext[3::2] != ext[1:-2:2]
    alpha = np.full((logp.shape[0], n_states), NEG_INF)
    alpha[0, 0] = logp[0, blank]
    if n_states > 1:
        alpha[0, 1] = logp[0, ext[1]]
    for t in range(1, logp.shape[0]):
        prev = alpha[t - 1]
        acc = prev.copy()
        acc[1:] = np.logaddexp(acc[1:], prev[:-1])
        acc[2:] = np.where(skip[2:], np.logaddexp(acc[2:], prev[:-2]), acc[2:])
        alpha[t] = acc + logp[t, ext]
    return alpha, ext


def ctc_log_likelihood(logp: np.ndarray, labels: Sequence[int], blank: int) -> float:
    """``log P(labels | x)`` under CTC (= ``-ctc_loss``); ``-inf`` when too few frames."""
    if len(logp) == 0:
        return 0.0 if not labels else NEG_INF
    alpha, _ = _alphas(logp, labels, blank)
    last = alpha[-1]
    return float(last[-1] if len(labels) == 0 else np.logaddexp(last[-1], last[-2]))


def ctc_prefix_log_probs(logp: np.ndarray, labels: Sequence[int], blank: int) -> np.ndarray:
    """``[log P(labels[:u] is a prefix | x) for u in 1..U]`` (the empty prefix has log-prob 0).

    ``P(l_1..l_u...)`` sums, over the frame ``t`` where ``l_u`` is first emitted, the
    probability of having produced exactly ``l_1..l_{u-1}`` by frame ``t-1`` (ending in a blank,
    or in ``l_{u-1}`` when ``l_u`` differs from it) times ``p_t(l_u)``; later frames are free.
    """
    n = len(labels)
    if n == 0:
        return np.zeros(0)
    logp = np.asarray(logp, dtype=np.float64)
    if len(logp) == 0:
        return np.full(n, NEG_INF)
    alpha, ext = _alphas(logp, labels, blank)
    before = np.full((logp.shape[0], ext.size), NEG_INF)  # alpha at t-1, with the "nothing yet" start state
    before[0, 0] = 0.0
    before[1:] = alpha[:-1]
    u = np.arange(1, n + 1)
    entry = before[:, 2 * u - 2]  # ended in the blank before l_u
    from_label = np.full_like(entry, NEG_INF)
    lab = np.asarray(labels)
    differs = np.zeros(n, dtype=bool)
    differs[1:] = lab[1:] != lab[:-1]
    idx = np.where(differs)[0]
    from_label[:, idx] = before[:, 2 * (idx + 1) - 3]
    return _logsumexp_columns(np.logaddexp(entry, from_label) + logp[:, lab])


def _logsumexp_columns(terms: np.ndarray) -> np.ndarray:
    peak = np.max(terms, axis=0)
    out = np.full(peak.shape, NEG_INF)
    ok = np.isfinite(peak)
    out[ok] = peak[ok] + np.log(np.sum(np.exp(terms[:, ok] - peak[ok]), axis=0))
    return out
