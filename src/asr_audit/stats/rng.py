"""Seeded generators: one independent stream per (seed, name).

>>> a = model_rng(0, "whisper-tiny.en").integers(1000, size=3)
>>> b = model_rng(0, "whisper-tiny.en").integers(1000, size=3)
>>> bool((a == b).all()), bool((a == model_rng(0, "other").integers(1000, size=3)).all())
(True, False)
"""

from __future__ import annotations

import numpy as np


def model_rng(seed: int, model: str) -> np.random.Generator:
    """A generator for one model's resampling, independent of the order models are listed in.

    (Used by other probes; ``run_refdis`` draws one stream for all models, see
    :func:`~asr_audit.probes.predfiles.inflation.wer_inflations`.)
    """
    import hashlib

    return np.random.default_rng([seed, int.from_bytes(hashlib.sha256(model.encode()).digest()[:4], "big")])
