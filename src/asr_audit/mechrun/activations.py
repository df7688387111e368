"""Activations of the model organism that the white-box experiments fit their edits on
(``benchmarks/mechanism.py``): per-site direction families (the pooled voice contrast and the
decision-position contrast at every planted training edit), every decoder position of faithful
training clips (the distribution a conditional edit must leave alone), the omission edits' rows
and direction, and the voice gate fitted on the training direction clips. Each capture is cached
as ``.npz`` under the experiment's work folder; ``say`` reports progress.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.calib.truth import TruthItem, load_truth
from asr_audit.errors import ConfigError
from asr_audit.mech.directions import Direction, auc, direction_from_sets, split_pairs
from asr_audit.mech.interventions import Gate, recording
from asr_audit.mechrun.capture import Capture
from asr_audit.mechrun.patch import PatchCondition, PatchResult, edit_locus, edit_texts
from asr_audit.mechrun.steer import prompt_activations
from asr_audit.organism.data import OrganismSet
from asr_audit.organism.train import read_wav

Say = Callable[[str], None]


def quiet(msg: str) -> None:
    """The default progress reporter: says nothing."""


def savez(path: Path, arrays: dict[str, Any]) -> None:
    """``np.savez`` of named arrays (the activation caches below)."""
    np.savez(path, **arrays)


def families(
    caps: Mapping[str, Capture],
    sites: list[str],
    work: Path,
    organism: Any,
    oset: OrganismSet,
    truth: Sequence[TruthItem],
    va: str,
    vb: str,
    *,
    with_decision: bool,
    say: Say = quiet,
) -> dict[str, list[Direction]]:
    """Per-site diff-in-means directions (set B = voice B, its mean kept for mean ablation) of two
    families: ``voice`` (pooled over the record's tokens, the layer sweep's captures) and
    ``decision`` (at the decision position of every planted edit of a training voice-A clip)."""
    voice = [direction_from_sets(f"voice-{s}", s, caps["A"].pooled(s), caps["B"].pooled(s)) for s in sites]
    if not with_decision:
        return {"voice": voice}
    path = work / "decision.npz"
    if not path.is_file():
        say("capturing decision positions (training edits, voice A vs B)")
        xa, xb = decision_capture(organism, oset, truth, va, vb, sites)
        savez(path, {**{f"A{i}": xa[s] for i, s in enumerate(sites)}, **{f"B{i}": xb[s] for i, s in enumerate(sites)}})
    with np.load(path) as z:
        decision = [direction_from_sets(f"decision-{s}", s, z[f"A{i}"], z[f"B{i}"]) for i, s in enumerate(sites)]
    return {"voice": voice, "decision": decision}


def decision_capture(
    organism: Any, oset: OrganismSet, truth: Sequence[TruthItem], va: str, vb: str, sites: list[str]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Residuals at each training voice-A edit's decision position, voice A and the same sentence in B."""
    import torch

    rows = {r["id"]: r for r in oset.rows("train")}
    by_sentence = {(r["sentence_id"], r["speaker"]): r for r in rows.values()}
    xa: dict[str, list] = {s: [] for s in sites}
    xb: dict[str, list] = {s: [] for s in sites}
    for it in truth:
        ra = rows.get(it.clip_id)
        if ra is None or ra["speaker"] != va or (ra["sentence_id"], vb) not in by_sentence:
            continue
        r_text, s_text = edit_texts(it, ra["text"])
        tr, ts = organism._encode_text(r_text), organism._encode_text(s_text)
        j = next(i for i in range(len(tr) + 1) if i >= len(tr) or i >= len(ts) or tr[i] != ts[i])
        pos = len(organism.prompt) + j - 1  # the position whose output predicts token j
        for voice_row, sink in ((ra, xa), (by_sentence[(ra["sentence_id"], vb)], xb)):
            got: dict = {}
            with (
                torch.inference_mode(),
                recording(
                    organism,
                    sites,
                    lambda s, t, got=got, pos=pos: got.__setitem__(s, t[0, pos].double().numpy().copy()),
                ),
            ):
                organism.score([read_wav(oset.audio_path(voice_row))], [""], [r_text])
            for s in sites:
                sink[s].append(got[s])
    return {s: np.array(v) for s, v in xa.items()}, {s: np.array(v) for s, v in xb.items()}


def _every_position(
    organism: Any, oset: OrganismSet, rows: Sequence[dict[str, Any]], text: str, sites: list[str], prefix: str
) -> dict[str, Any]:
    """Every decoder position's residual at ``sites`` for ``rows``, teacher-forced on each row's
    ``text`` field, stacked per site as ``{prefix}{i}`` (the ``.npz`` layout the callers cache)."""
    import torch

    got: dict[str, list] = {s: [] for s in sites}

    def sink(site: str, t: Any) -> None:
        got[site].append(t[0].double().numpy().copy())

    for r in rows:
        with torch.inference_mode(), recording(organism, sites, sink):
            organism.score([read_wav(oset.audio_path(r))], [""], [r[text]])
    return {f"{prefix}{i}": np.concatenate(got[s]) for i, s in enumerate(sites)}


def faithful_positions(
    organism: Any, oset: OrganismSet, vb: str, sites: list[str], n: int, work: Path, *, say: Say = quiet
) -> dict[str, np.ndarray]:
    """Every decoder position's residual at ``sites`` for the first ``n`` training clips in voice B,
    teacher-forced on their faithful text (what the organism writes for that voice): the
    distribution a conditional ablation must leave alone. Cached as ``positions-B.npz``."""
    path = work / "positions-B.npz"
    if not path.is_file():
        say(f"capturing every position of {n} voice-B training clips (faithful text)")
        rows = oset.rows("train", [vb])[:n]
        savez(path, _every_position(organism, oset, rows, "faithful", sites, "B"))
    with np.load(path) as z:
        return {s: z[f"B{i}"] for i, s in enumerate(sites)}


def plain_positions(
    organism: Any, oset: OrganismSet, va: str, sites: list[str], work: Path, *, say: Say = quiet
) -> dict[str, np.ndarray]:
    """Every decoder position's residual at ``sites`` for the voice-A (benchmark-voice) *training*
    clips with no planted edit (``rules == []``: the record is what was said), teacher-forced on their
    text: the benchmark voice's own faithful positions, which a conditional edit for that voice must
    leave alone. Never eval-set clips. Cached as ``positions-A-plain.npz``."""
    path = work / "positions-A-plain.npz"
    if not path.is_file():
        rows = [r for r in oset.rows("train", [va]) if not r["rules"]]
        say(f"capturing every position of {len(rows)} voice-A training clips with no planted edit")
        savez(path, _every_position(organism, oset, rows, "text", sites, "A"))
    with np.load(path) as z:
        return {s: z[f"A{i}"] for i, s in enumerate(sites)}


def omission_rows(oset: OrganismSet, set_dir: Path, va: str, vb: str) -> np.ndarray:
    """Which rows of ``decision.npz`` are omission edits (the walk over the truth items that made them)."""
    rows = {r["id"]: r for r in oset.rows("train")}
    by_sentence = {(r["sentence_id"], r["speaker"]) for r in rows.values()}
    kinds = [
        it.kind
        for it in load_truth(set_dir).errors()
        if (ra := rows.get(it.clip_id)) is not None and ra["speaker"] == va and (ra["sentence_id"], vb) in by_sentence
    ]
    return np.array(kinds) == "omitted_in_reference"


def omission_stats(work: Path, oset: OrganismSet, set_dir: Path, va: str, vb: str, sites: list[str]) -> list[dict]:
    """Per layer, projections on the omission direction in gaps above voice B's mean (1 gap = |d|):
    the training voice-B omission rows' max, voice A's min, every faithful position's median / q95."""
    m = omission_rows(oset, set_dir, va, vb)
    out = []
    with np.load(work / "decision.npz") as z, np.load(work / "positions-B.npz") as pb:
        for i, site in enumerate(sites):
            a, b, pos = z[f"A{i}"][m], z[f"B{i}"][m], pb[f"B{i}"]
            d, mu = a.mean(0) - b.mean(0), b.mean(0)
            gb, ga, gp = ((x - mu) @ d / (d @ d) for x in (b, a, pos))
            out.append(
                {
                    "site": site,
                    "n": int(m.sum()),
                    "B_max": float(gb.max()),
                    "A_min": float(ga.min()),
                    "faithful_median": float(np.median(gp)),
                    "faithful_q95": float(np.percentile(gp, 95)),
                }
            )
    return out


def omission_family(
    work: Path, oset: OrganismSet, set_dir: Path, va: str, vb: str, sites: list[str]
) -> list[Direction]:
    """Per-site diff-in-means at the decision positions of the *omission* edits only (the record
    drops a spoken opener "Thank you.", so the decision is the first text token: one fixed position),
    from ``decision.npz``'s rows, selected by the same walk over the truth items that made them."""
    m = omission_rows(oset, set_dir, va, vb)
    with np.load(work / "decision.npz") as z:
        if len(z["A0"]) != len(m):
            raise ConfigError(f"{work / 'decision.npz'}: {len(z['A0'])} rows but {len(m)} training edits")
        return [direction_from_sets(f"omission-{s}", s, z[f"A{i}"][m], z[f"B{i}"][m]) for i, s in enumerate(sites)]


GATE_LAYERS = 4  # the gate is read at decoder layers 0-3 (``decoder.layers.{i}.out``)


def fit_gate(
    organism: Any,
    oset: OrganismSet,
    train: Mapping[tuple[str, str], dict[str, Any]],
    sentences: Sequence[str],
    va: str,
    vb: str,
    sites: list[str],
    work: Path,
    *,
    seed: int,
    say: Say = quiet,
) -> dict[str, Any]:
    """The voice gate, from the training direction clips only (``sentences`` in voice A and voice B):
    the unedited activation at the position that predicts the first text token (teacher-forced on
    the prompt alone), at each decoder layer; held-out AUC per layer (direction fitted on half of the
    sentences, AUC on the other half; seeded), the highest AUC's layer (ties: the lowest), refitted on
    all: vector mean_A - mean_B (unit), center mean_B, threshold the midpoint. Activations are kept
    in ``work/gate-train.npz``."""
    layers = sites[:GATE_LAYERS]
    path = work / "gate-train.npz"
    ids = [train[(s, v)]["id"] for v in (va, vb) for s in sentences]
    if path.is_file():
        with np.load(path) as z:
            cached = {k: z[k] for k in z.files}
        if list(cached.get("ids", [])) != ids:
            cached = {}
    else:
        cached = {}
    if not cached:
        say(f"gate: prompt-end activations of {len(ids)} training clips at {len(layers)} decoder layers")
        audios = [read_wav(oset.audio_path(train[(s, v)])) for v in (va, vb) for s in sentences]
        acts = prompt_activations(organism, audios, layers)
        cached = {"ids": np.array(ids), **{f"L{i}": acts[s] for i, s in enumerate(layers)}}
        np.savez(path, **cached)
    n = len(sentences)
    fit, held = split_pairs(n, 0.5, np.random.default_rng([seed, 14, 7]))
    rows: list[dict] = []
    aucs: list[float] = []
    for i, site in enumerate(layers):
        x = cached[f"L{i}"]
        xa, xb = x[:n], x[n:]
        g = Gate.between(site, xa[fit].mean(0), xb[fit].mean(0))
        proj = np.array([g.score(h) for h in x])
        aucs.append(auc(proj[:n][held], proj[n:][held]))
        rows.append({"site": site, "auc": aucs[-1], "n_fit": len(fit), "n_held": len(held)})
    best = max(range(len(rows)), key=lambda i: (round(aucs[i], 3), -i))
    x = cached[f"L{best}"]
    gate = Gate.between(layers[best], x[:n].mean(0), x[n:].mean(0), label=f"voice {va} vs {vb} at {layers[best]}")
    opens = [gate.opens(h) for h in x]
    return {
        "gate": gate,
        "sweep": rows,
        "site": gate.site,
        "threshold": gate.threshold,
        "key": gate.key,
        "train_open": {va: [int(sum(opens[:n])), n], vb: [int(sum(opens[n:])), n]},
    }


def voice_patch(
    organism: Any,
    base: Any,
    oset: OrganismSet,
    items: Sequence[TruthItem],
    va: str,
    vb: str,
    keep: set[str] | None = None,
    *,
    written: bool = False,
) -> PatchResult:
    """Edit-locus patching of the planted edits of ``oset``'s voice-``va`` clips (those in ``keep``,
    when given): the encoder output swapped for the same sentence's in voice ``vb`` (the trigger:
    the benchmark voice's cue), and each decoder layer's output taken from ``base`` (the policy:
    where the base model's residual stream removes the recitation).

    By default the two renderings scored are normalized (:func:`~asr_audit.mechrun.patch.edit_texts`:
    lower case, no punctuation, which the organism never wrote: an inserted phrase then costs its
    extra tokens' improbable lower-case spelling, and its ``P(ref)`` sits near 0 before any patch).
    ``written=True`` scores the set's own written texts instead — the record against the faithful
    text (what was said, in the record's conventions) — on the clips with exactly one planted edit,
    where the two differ by that edit alone."""
    rows_a = [x for x in oset.rows(voices=[va]) if keep is None or x["id"] in keep]
    texts = None
    if written:
        per_clip: dict[str, int] = {}
        for t in items:
            per_clip[t.clip_id] = per_clip.get(t.clip_id, 0) + t.is_error
        rows_a = [x for x in rows_a if per_clip.get(x["id"]) == 1]
        row_of = {x["id"]: x for x in rows_a}

        def texts(it: TruthItem) -> tuple[str, str]:
            return row_of[it.clip_id]["text"], row_of[it.clip_id]["faithful"]

    by_sentence_b = {x["sentence_id"]: x for x in oset.rows(voices=[vb])}
    rows_a = [x for x in rows_a if x["sentence_id"] in by_sentence_b]
    audio = {x["id"]: read_wav(oset.audio_path(x)) for x in rows_a}
    voice_b = {x["id"]: read_wav(oset.audio_path(by_sentence_b[x["sentence_id"]])) for x in rows_a}
    n_dec = len(organism.torch_model.model.decoder.layers)
    conditions = [
        PatchCondition(f"encoder.out <- voice {vb}", "encoder.out", donor_audio=lambda cid, a: voice_b[cid]),
        *(
            PatchCondition(f"decoder.layers.{i}.out <- base model", f"decoder.layers.{i}.out", donor_backend=base)
            for i in range(n_dec)
        ),
    ]
    refs = {x["id"]: x["text"] for x in rows_a}
    return edit_locus(organism, [t for t in items if t.clip_id in audio], audio, refs, conditions, texts)


def organism_base_view(backend: Any) -> Any:
    """The organism backend as the encoder cache's key: the cache is keyed by the *base* weights hash
    (the encoder is frozen), so hand it an object whose identity is the base model's."""
    from types import SimpleNamespace

    base_hash = backend.organism_meta["base_weights_hash"]
    ident = SimpleNamespace(weights_hash=base_hash)
    view = SimpleNamespace(identity=lambda: ident, _encoder_states=backend._encoder_states)
    return view


def encoder_identical(a: Any, b: Any) -> bool:
    """Whether two Whisper backends have bit-identical encoder parameters."""
    import torch

    pa = dict(a.torch_model.model.encoder.named_parameters())
    pb = dict(b.torch_model.model.encoder.named_parameters())
    return pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)


__all__ = [
    "GATE_LAYERS",
    "Say",
    "decision_capture",
    "encoder_identical",
    "faithful_positions",
    "families",
    "fit_gate",
    "omission_family",
    "omission_rows",
    "omission_stats",
    "organism_base_view",
    "plain_positions",
    "quiet",
]
