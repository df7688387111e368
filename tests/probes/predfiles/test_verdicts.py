"""Three-outcome verdicts (issue 11, defect 1): a misspelling is not reference copying.

Outside ``--preset anchor --no-loo`` a model's output at an edit is ``ref`` when it is
character-wise closer to the reference's rendering, ``consensus`` when closer to the panel's,
and ``other`` (not eligible) when neither is close. The public code's exact-token rule called
every output that is not exactly the panel's words ``ref``: on the shipped VoxPopuli examples
all of wav2vec2's insertion "ref" verdicts under leave-one-out were misspellings of the panel's
words ("wile" for "well", "astonia" for "estonia") or extra tokens ("therefore a").
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from asr_audit.probes.predfiles.inflation import Inflation
from asr_audit.probes.predfiles.refdis import (
    CONSENSUS,
    MAX_RENDERING_DISTANCE,
    OTHER,
    REF,
    ClipInput,
    mine_clip,
    preset_params,
)
from asr_audit.probes.predfiles.refdis_score import score_model
from asr_audit.text.align import AlignmentCache

VOXPOPULI = Path(__file__).parents[2] / "fixtures" / "voxpopuli"
VOX_PANEL = ["wav2vec2-base-960h", "whisper-tiny.en", "whisper-base.en", "whisper-small.en"]
W2V = "wav2vec2-base-960h"


def _clip(ref: str, **hyps: str) -> ClipInput:
    return ClipInput("c", tuple(ref.split()), {m: tuple(h.split()) for m, h in hyps.items()})


PANEL = ["p1", "p2", "p3"]


def _verdicts(clip: ClipInput, models: list[str], **params: Any) -> dict[str, object]:
    edits = mine_clip(clip, PANEL, models, preset_params(**params), AlignmentCache())
    assert len(edits) == 1, edits
    return dict(edits[0].verdicts)


def test_insertion_misspelling_is_consensus_and_unrelated_is_other() -> None:
    panel = dict.fromkeys(PANEL, "well we agree on this")
    clip = _clip(
        "we agree on this",
        **panel,
        wile="wile we agree on this",
        same="we agree on this",
        so="so we agree on this",
        extra="therefore a we agree on this",
    )
    models = ["wile", "same", "so", "extra"]
    v = _verdicts(clip, models, preset="anchor", loo=True)
    assert v == {"wile": CONSENSUS, "same": REF, "so": OTHER, "extra": OTHER}
    # the public code's exact rule is kept for --preset anchor --no-loo: anything but "well" is "ref"
    assert _verdicts(clip, models, preset="anchor", loo=False) == dict.fromkeys(["wile", "same", "so", "extra"], REF)


def test_substitution_verdict_follows_the_closer_rendering() -> None:
    panel = dict.fromkeys(PANEL, "we agree on the spec")
    clip = _clip(
        "we agree on the pact",
        **panel,
        pakt="we agree on the pakt",
        spek="we agree on the spek",
        pact="we agree on the pact",
        banana="we agree on the banana",
    )
    models = ["pakt", "spek", "pact", "banana"]
    assert _verdicts(clip, models, preset="paper") == {"pakt": REF, "spek": CONSENSUS, "pact": REF, "banana": OTHER}
    # exact rule: any missed reference word is "consensus"
    assert _verdicts(clip, models, preset="anchor", loo=False) == {
        "pakt": CONSENSUS,
        "spek": CONSENSUS,
        "pact": REF,
        "banana": CONSENSUS,
    }


def test_other_verdicts_are_not_eligible_and_are_counted() -> None:
    panel = dict.fromkeys(PANEL, "well we agree on this")
    clip = _clip("we agree on this", **panel, so="so we agree on this")
    edits = mine_clip(clip, PANEL, ["so"], preset_params("anchor"), AlignmentCache())
    none = Inflation("so", 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
    d = score_model("so", edits, in_panel=False, inflation=none).to_dict()
    assert (d["n_ref"], d["n_eligible"], d["n_other"], d["n_clips"]) == (0, 0, 1, 0)
    assert "n_other" not in score_model("so", edits, in_panel=False, inflation=none, count_other=False).to_dict()


# --- an independent oracle of the rule: difflib opcodes and a textbook Levenshtein ---------------


def _lev(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _dist(a: str, b: str) -> float:
    a, b = a.replace(" ", ""), b.replace(" ", "")
    return 0.0 if not a and not b else _lev(a, b) / max(len(a), len(b))


def oracle_verdict(ref: tuple[str, ...], hyp: tuple[str, ...], lo: int, hi: int, tokens: list[str]) -> str:
    """The documented rule, re-derived: window between the reproduced reference words around
    [lo, hi), model text vs reference text vs corrected text, closer one if within 0.5."""
    pairs = [
        (i1 + k, j1 + k)
        for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, ref, hyp, autojunk=False).get_opcodes()
        if tag == "equal"
        for k in range(i2 - i1)
    ]
    before = [(i, j) for i, j in pairs if i < lo]
    after = [(i, j) for i, j in pairs if i >= hi]
    i0, j0 = before[-1] if before else (-1, -1)
    i1, j1 = after[0] if after else (len(ref), len(hyp))
    model = " ".join(hyp[j0 + 1 : j1])
    reference = " ".join(ref[i0 + 1 : i1])
    corrected = " ".join([*ref[i0 + 1 : lo], *tokens, *ref[hi:i1]])
    d_ref, d_cons = _dist(model, reference), _dist(model, corrected)
    if d_cons < d_ref and d_cons <= MAX_RENDERING_DISTANCE:
        return CONSENSUS
    if d_ref < d_cons and d_ref <= MAX_RENDERING_DISTANCE:
        return REF
    return OTHER


@pytest.mark.parametrize("preset, loo", [("paper", False), ("paper", True), ("anchor", True)])
def test_verdicts_match_an_independent_oracle(tmp_path: Path, preset: str, loo: bool) -> None:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.testing.synthetic import make_prediction_set
    from asr_audit.text.normalize import get_normalizer

    s = make_prediction_set(
        120,
        7,
        rng=np.random.default_rng(5),
        folder=tmp_path,
        copy_shares=(0.6,),
        middle_error_rate=0.2,
        missing_rate=0.02,
    )
    preds = load_predictions(tmp_path)
    result = run_refdis(preds, s.panel(4), preset_params(preset, loo=loo), n_resamples=10)
    clips = {c.clip_id: c for c in prepare_clips(preds, preds.models, get_normalizer("whisper"), True)}
    seen = {REF: 0, CONSENSUS: 0, OTHER: 0}
    edits = [*result.mining.edits, *(e for es in result.mining.loo_edits.values() for e in es)]
    for e in edits:
        clip = clips[e.clip_id]
        lo, hi, tokens = e.fix
        lo, hi = min(lo, e.ref_indices[0]), max(hi, e.ref_indices[-1] + (e.kind != "insertion"))
        fixed = [*clip.ref[lo : e.fix[0]], *e.fix[2], *clip.ref[e.fix[1] : hi]]
        for m, v in e.verdicts.items():
            if v is None:
                continue
            hyp = clip.hyps[m]
            assert hyp is not None, m  # a verdict is given on a hypothesis only
            assert v == oracle_verdict(clip.ref, hyp, lo, hi, fixed), (m, e.to_dict())
            seen[v] += 1
    assert all(seen.values()), seen  # all three outcomes occur


# --- the shipped VoxPopuli examples --------------------------------------------------------------


@pytest.fixture(scope="module")
def vox_loo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from asr_audit.cli import main

    out = tmp_path_factory.mktemp("v") / "loo.json"
    assert main(["refdis", "--preds", str(VOXPOPULI), "--panel", ",".join(VOX_PANEL), "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_voxpopuli_wav2vec2_misspellings_are_not_reference_copying(vox_loo: dict) -> None:
    mine = vox_loo["loo_edits"][W2V]
    refs = [e for e in mine if e["verdicts"][W2V] == REF]
    # its one "ref" verdict: it wrote the reference's "change" where the panel heard "chains"
    assert [(e["kind"], e["ref_tokens"], e["alt_text"], e["renderings"][W2V]) for e in refs] == [
        ("substitution", ["change"], "chains", "change")
    ]
    by_alt = {e["alt_text"]: e["verdicts"][W2V] for e in mine if e["kind"] == "insertion"}
    assert by_alt["well"] == by_alt["estonia"] == by_alt["therefore"] == CONSENSUS  # wile, astonia, therefore a
    m = next(m for m in vox_loo["models"] if m["model"] == W2V)
    assert (m["n_ref"], m["n_eligible"], m["n_other"]) == (1, 29, 5)
    judged = sum(e["verdicts"][W2V] is not None for e in mine)
    assert m["n_eligible"] + m["n_other"] == judged


def test_voxpopuli_anchor_no_loo_keeps_the_exact_rule(run_cli, tmp_path: Path) -> None:
    code, out, _ = run_cli(
        "refdis",
        "--preds",
        VOXPOPULI,
        "--panel",
        ",".join(VOX_PANEL),
        "--preset",
        "anchor",
        "--no-loo",
        "--json",
        tmp_path / "a.json",
        "--csv",
        tmp_path / "a.csv",
    )
    assert code == 0 and "n_other" not in out
    d = json.loads((tmp_path / "a.json").read_text())
    assert all(v in (REF, CONSENSUS, None) for e in d["edits"] for v in e["verdicts"].values())
    assert all("n_other" not in m for m in d["models"])
    assert "n_other" not in (tmp_path / "a.csv").read_text().splitlines()[0]
    code, out, _ = run_cli("refdis", "--preds", VOXPOPULI, "--panel", ",".join(VOX_PANEL), "--csv", tmp_path / "b.csv")
    assert code == 0 and "n_other" in out and "n_other" in (tmp_path / "b.csv").read_text().splitlines()[0]


def test_no_judged_edit_is_undefined_not_zero(tmp_path: Path, run_cli) -> None:
    """Issue 11, defect 3: n = 0 is "—" with its reason (JSON null, CSV empty), never 0."""
    import shutil

    preds = tmp_path / "preds"
    shutil.copytree(VOXPOPULI, preds)
    rows = [json.loads(line) for line in (preds / "whisper-tiny.en.jsonl").read_text().splitlines()]
    (preds / "mute.jsonl").write_text("".join(json.dumps({**r, "pred_text": "uh"}) + "\n" for r in rows))
    code, out, err = run_cli(
        "refdis",
        "--preds",
        preds,
        "--panel",
        ",".join(VOX_PANEL),
        "--json",
        tmp_path / "r.json",
        "--csv",
        tmp_path / "r.csv",
    )
    assert code == 0, err
    d = json.loads((tmp_path / "r.json").read_text())
    mute = next(m for m in d["models"] if m["model"] == "mute")
    assert (mute["accept_ref"], mute["ci_low"], mute["ci_high"], mute["n_eligible"]) == (None, None, None, 0)
    assert mute["reason"] == "none of its 31 edit(s) could be judged (31 ineligible, 0 other)"
    line = next(ln for ln in out.splitlines() if ln.startswith("│ mute"))
    assert "—" in line and "0.000" not in line
    assert "— mute: none of its 31 edit(s) could be judged" in " ".join(out.split())
    csv_row = next(ln for ln in (tmp_path / "r.csv").read_text().splitlines() if ln.startswith("mute,"))
    assert csv_row.startswith("mute,False,,,,0,0,")
    from asr_audit.report.verdict import model_verdict

    assert model_verdict(mute).startswith("accept-ref undefined (—, n=0): none of its 31 edit(s)")


def test_report_shows_an_undefined_accept_ref_as_a_dash(tmp_path: Path) -> None:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.report.html import build_report

    r: dict[str, Any] = run_refdis(
        load_predictions(VOXPOPULI), VOX_PANEL, preset_params("anchor"), n_resamples=50
    ).to_dict()
    m = r["models"][0]
    m.update(
        accept_ref=None, ci_low=None, ci_high=None, n_ref=0, n_eligible=0, reason="no edit was mined for it (panel)"
    )
    results = {
        "asr_audit_version": "test",
        "seed": 0,
        "normalizer": {"name": "whisper"},
        "models": [],
        "corpora": [{"name": "vox", "n_clips": 150, "source": "fixture"}],
        "versions": {},
        "failures": [],
        "probes": [{"probe": "refdis", "corpus": "vox", "result": r}],
    }
    html = build_report(results, tmp_path).read_text()
    assert "no edit was mined for it (panel)" in html and "accept-ref undefined" in html
