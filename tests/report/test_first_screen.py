"""The report's first screen leads with the answer (issue 30): flagged rows first, a headline per
corpus, every false-positive rate labelled by its flag."""

from __future__ import annotations

from asr_audit.report.html import _first, headlines
from asr_audit.report.summary import FLAGGED, NOT_ENOUGH, NOT_FLAGGED, SummaryRow, _fpr_text
from asr_audit.stats.flags import PANEL_MEMBER_NO_LOO


def _row(model: str, verdict: str, corpus: str = "bench", reasons: tuple[str, ...] = ()) -> SummaryRow:
    return SummaryRow(model=model, corpus=corpus, verdict=verdict, reasons=reasons, section="s")


def test_flagged_rows_come_first_and_run_order_holds_within_a_verdict() -> None:
    rows = [
        _row("a", NOT_ENOUGH),
        _row("b", NOT_FLAGGED),
        _row("c", FLAGGED),
        _row("d", "some newer verdict"),
        _row("e", NOT_ENOUGH),
        _row("f", FLAGGED, corpus="other"),
    ]
    assert [r.model for r in sorted(rows, key=_first)] == ["c", "f", "d", "b", "a", "e"]


def test_one_headline_per_corpus_in_run_order() -> None:
    rows = [
        _row("honest", NOT_FLAGGED, "vox"),
        _row("organism", FLAGGED, "bench", ("copies reference errors 30/40",)),
        _row("control", NOT_FLAGGED, "bench"),
        _row("quiet", NOT_ENOUGH, "bench"),
    ]
    assert headlines(rows) == [
        {"corpus": "vox", "text": "0 of 1 model flagged. 1 not flagged."},
        {
            "corpus": "bench",
            "text": "1 of 3 models flagged: organism (copies reference errors 30/40). 1 not flagged, 1 not enough data.",
        },
    ]


def test_false_positive_rates_name_their_flag() -> None:
    assert _fpr_text("refdis.copies_reference", "tested model").startswith("copying: ")
    assert _fpr_text("refdis.wer_inflated", "tested model").startswith("WER inflation: ")
    assert _fpr_text("battery.difference", "original vs one condition").startswith("audio: ")
    assert _fpr_text("refdis.copies_reference", PANEL_MEMBER_NO_LOO) == (
        "copying: not calibrated (panel member, no leave-one-out)"
    )
