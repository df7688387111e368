"""People's labels carry the labeller's measured accuracy into their precision: one annotator's
labels give rates but never a copying claim; two annotators who agree make one possible."""

from __future__ import annotations

from asr_audit.probes.predfiles.verified import edit_key, with_verification
from asr_audit.probes.predfiles.verified_labels import labels_verification
from asr_audit.stats.flags import copies_reference
from asr_audit.store.labels import PANEL, REFERENCE, LabelRow


def _edit(i: int) -> dict:
    return {
        "clip_id": f"c{i}",
        "kind": "substitution",
        "ref_indices": [2],
        "ref_tokens": ["sheet"],
        "alt_text": "seat",
        "verdicts": {"m": "ref"},
        "scored": ["m"],
    }


def _rows(edits: list[dict], annotators: tuple[str, ...], choice: str) -> list[LabelRow]:
    return [
        LabelRow(id=n, annotator=a, time=0.0, edit_key=edit_key(e), run_hash="h", choice=choice, weight=1.0)
        for n, (a, e) in enumerate((a, e) for e in edits for a in annotators)
    ]


def _model(rows: list[LabelRow], edits: list[dict]) -> dict:
    result = {"edits": edits, "loo_edits": {}, "models": [{"model": "m"}]}
    return with_verification(result, labels_verification(rows))["models"][0]


def test_one_annotator_gives_rates_but_no_claim() -> None:
    edits = [_edit(i) for i in range(60)]
    m = _model(_rows(edits, ("a",), PANEL), edits)
    assert m["verified"]["accept_ref"] == 1.0 and m["verified"]["n_eligible"] == 60
    assert m["verified"]["copy_low"] == 0.0
    assert not copies_reference(m)


def test_two_agreeing_annotators_support_a_claim() -> None:
    edits = [_edit(i) for i in range(60)]
    m = _model(_rows(edits, ("a", "b"), PANEL), edits)
    assert m["verified"]["copy_low"] > 0.5
    assert copies_reference(m)


def test_disagreeing_annotators_support_nothing() -> None:
    edits = [_edit(i) for i in range(60)]
    rows = _rows(edits[:30], ("a", "b"), PANEL)
    rows += [
        LabelRow(id=1000 + n, annotator=a, time=0.0, edit_key=edit_key(e), run_hash="h", choice=c, weight=1.0)
        for n, (a, c, e) in enumerate((a, c, e) for e in edits[30:] for a, c in (("a", PANEL), ("b", REFERENCE)))
    ]
    m = _model(rows, edits)
    assert not copies_reference(m)
