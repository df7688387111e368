"""The screen of candidate edits by teacher-forced P(ref) (``benchmarks/mechanism.py`` steps
``screen`` and ``screen-rank``): for every held-out benchmark-voice planted edit, the probability
of the reference rendering against the spoken one, clean and under each candidate arm (with random
controls), without decoding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from asr_audit.calib.truth import TruthItem
from asr_audit.mech.directions import Direction, paired_subspace
from asr_audit.mech.interventions import Intervention, intervene
from asr_audit.mechrun.activations import Say, quiet
from asr_audit.mechrun.arms import ablate_arm, induce_arm, where_sets
from asr_audit.mechrun.capture import Capture
from asr_audit.mechrun.patch import edit_texts, logprob, p_ref
from asr_audit.mechrun.steer import Arm
from asr_audit.organism.data import OrganismSet
from asr_audit.organism.train import read_wav


def screen(
    organism: Any,
    oset: OrganismSet,
    items: Sequence[TruthItem],
    va: str,
    fam: dict[str, list[Direction]],
    sites: list[str],
    *,
    seed: int,
    say: Say = quiet,
) -> list:
    """Teacher-forced P(ref) of the held-out voice-A edits under every candidate and its controls."""
    rng = np.random.default_rng(seed)
    n_dec = len(sites)
    cands: list[tuple[str, Arm | None]] = []
    for name, ds in fam.items():
        for where, sel in where_sets(ds, n_dec):
            cands.append((f"{name} mean-ablate {where}", ablate_arm(sel, "mean", "x")))
        cands.append((f"{name} centred-ablate all", ablate_arm(ds, "centred", "x")))
        cands.append((f"{name} proj-ablate all", ablate_arm(ds, "proj", "x")))
        cands.append((f"random (per site) mean-ablate all [{name} centers]", ablate_arm(ds, "mean", "x", rng)))
        cands.append((f"{name} induce alpha=-2 all", induce_arm(ds, -2.0, "x")))
        cands.append((f"random (same norms) induce alpha=-2 all [{name}]", induce_arm(ds, -2.0, "x", rng)))
    return screen_candidates(organism, oset, items, va, cands, say=say)


def screen_rank(
    organism: Any,
    oset: OrganismSet,
    items: Sequence[TruthItem],
    va: str,
    caps: Mapping[str, Capture],
    sites: list[str],
    *,
    seed: int,
    say: Say = quiet,
) -> list:
    """Teacher-forced P(ref) under mean ablation of the top-k paired-SVD subspace of the voice
    captures (A - B per training sentence) at every decoder layer at once, k = 1, 2, 4, 8, 16, and
    a random rank-16 subspace per site (same centers)."""

    rng = np.random.default_rng(seed)
    bases = {s: paired_subspace(caps["A"].pooled(s), caps["B"].pooled(s), 16)[0] for s in sites}
    centers = {s: caps["B"].pooled(s).mean(0) for s in sites}

    def arm(k: int, random: bool = False) -> Arm:
        parts = []
        for s in sites:
            b = rng.standard_normal((k, bases[s].shape[1])) if random else bases[s][:k]
            parts.append(Intervention.ablation([s], b, center=centers[s], label="x"))
        return Arm("x", tuple(parts))

    cands = [(f"voice SVD k={k} mean-ablate all", arm(k)) for k in (1, 2, 4, 8, 16)]
    cands.append(("random rank-16 mean-ablate all", arm(16, random=True)))
    return screen_candidates(organism, oset, items, va, cands, say=say)


def screen_candidates(
    organism: Any,
    oset: OrganismSet,
    items: Sequence[TruthItem],
    va: str,
    cands: Sequence[tuple[str, Arm | None]],
    *,
    say: Say = quiet,
) -> list:
    """Teacher-forced P(ref) (reference rendering against the spoken one) of every held-out
    voice-``va`` edit, clean and under each candidate arm."""
    import torch

    rows = oset.rows("test", [va])
    audio = {r["id"]: read_wav(oset.audio_path(r)) for r in rows}
    texts = {r["id"]: r["text"] for r in rows}
    pairs = [(it, *edit_texts(it, texts[it.clip_id])) for it in items if it.clip_id in audio]
    out = []
    for label, arm in [("clean", None), *cands]:
        p = []
        with torch.inference_mode(), intervene(organism, arm.interventions if arm else []):
            for it, r, s in pairs:
                p.append(p_ref(logprob(organism, audio[it.clip_id], r), logprob(organism, audio[it.clip_id], s)))
        a = np.array(p)
        row = {"label": label, "mean": float(a.mean()), "median": float(np.median(a)), "above": int((a > 0.5).sum())}
        row |= {"n": len(a), "p_ref": a.tolist()}
        say(f"screen {label}: mean {row['mean']:.3f} median {row['median']:.3f} >0.5 {row['above']}/{row['n']}")
        out.append(row)
    return out


__all__ = ["screen", "screen_candidates", "screen_rank"]
