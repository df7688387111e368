"""The prediction loader keeps one copy of shared text and reads JSONL a line at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.corpus import predfiles
from asr_audit.corpus.predfiles import _has_surrogate_escape, _iter_jsonl, load_predictions
from asr_audit.errors import InputFileError
from asr_audit.text.align import AlignmentCache


def write_model(folder: Path, model: str, hyps: list[str | None]) -> None:
    rows = [
        {"audio_filepath": f"clip-{i}", "text": f"the reference of clip {i}", "pred_text": h}
        for i, h in enumerate(hyps)
    ]
    (folder / f"{model}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_models_share_clip_ids_references_and_equal_hypotheses(tmp_path: Path) -> None:
    write_model(tmp_path, "a", ["same words", "a says"])
    write_model(tmp_path, "b", ["same words", None])
    preds = load_predictions(tmp_path)
    a, b = (preds.file(m).rows for m in ("a", "b"))
    for cid in ("clip-0", "clip-1"):
        ka = next(k for k in a if k == cid)
        kb = next(k for k in b if k == cid)
        assert ka is kb and a[cid].clip_id is b[cid].clip_id
        assert a[cid].reference is b[cid].reference is preds.references[cid]
    assert a["clip-0"].hypothesis is b["clip-0"].hypothesis
    assert b["clip-1"].hypothesis is None


def test_conflicting_reference_names_the_first_file_and_line(tmp_path: Path) -> None:
    write_model(tmp_path, "a", ["x", "y"])
    rows = [{"audio_filepath": "clip-1", "text": "another reference", "pred_text": "y"}]
    (tmp_path / "b.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"b\.jsonl:1: .*in .*a\.jsonl:2"):
        load_predictions(tmp_path)


def test_streamed_rows_before_a_bad_line_then_the_careful_error(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl"
    p.write_bytes(b'{"a": 1}\n\n{"b": 2}\n{"c": \n{"d": 4}\n')
    it = _iter_jsonl(p)
    assert next(it) == (1, {"a": 1})
    assert next(it) == (3, {"b": 2})
    with pytest.raises(InputFileError, match=r"m\.jsonl:4: bad JSON"):
        next(it)


def test_surrogate_escape_found_across_chunk_boundaries(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl"
    body = b'{"t": "' + b"x" * 20 + b'\\ud800"}\n'
    p.write_bytes(body)
    for chunk in range(1, len(body) + 1):
        assert _has_surrogate_escape(p, chunk)
    p.write_bytes(body.replace(b"\\ud800", b"\\u00e9"))
    assert not any(_has_surrogate_escape(p, chunk) for chunk in range(1, len(body) + 1))


def test_alignment_cache_tokens_share_words() -> None:
    cache = AlignmentCache()
    one, two = cache.tokens("we agree with the report"), cache.tokens("the report we agree")
    assert one[0] is two[2] and one[3] is two[0] and one[4] is two[1]
    assert cache.tokens("we agree with the report") is one


def test_no_whole_file_read_for_jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_model(tmp_path, "a", ["x", "y"])

    def refuse(self: Path) -> bytes:
        raise AssertionError("read the whole file")

    monkeypatch.setattr(predfiles.Path, "read_bytes", refuse)
    assert len(load_predictions(tmp_path).references) == 2
