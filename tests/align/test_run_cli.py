"""Aligning a corpus through the store, and the ``asr-audit align`` verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.align.records import TIMINGS, ClipAlignment

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture()
def manifest(tmp_path: Path) -> Path:
    rows = [
        {
            "audio_filepath": str(FIXTURES / "librivox-0890.flac"),
            "id": "libri",
            "text": "UNLESS TO BE RATHER COLD HEARTED AND RATHER SELFISH IS TO BE ILL DISPOSED",
        },
        {"audio_filepath": "missing.wav", "id": "gone", "text": "hello world"},
        {"audio_filepath": str(FIXTURES / "tts-zorblax.flac"), "id": "tts", "text": "Zorblax paid 2011 euros."},
        {
            "audio_filepath": str(FIXTURES / "tts-zorblax.flac"),
            "id": "wrong",
            "text": "a completely different sentence about the weather in spring and the long summer",
        },
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_align_corpus_caches_and_continues(manifest: Path, tmp_path: Path, sphinx_aligner) -> None:
    from asr_audit.align.run import align_corpus
    from asr_audit.corpus.spec import load_corpus
    from asr_audit.store.sqlite import open_store

    corpus = load_corpus(manifest)
    with open_store(tmp_path / "s.sqlite3") as store:
        first = list(align_corpus(sphinx_aligner, corpus, store))
        assert [r.ok for r in first] == [True, False, True, False]
        assert "not found" in (first[1].error or "") and "no path" in (first[3].error or "")
        assert store.count(TIMINGS, sphinx_aligner.identity().key) == 2
        second = list(align_corpus(sphinx_aligner, corpus, store))
    assert [r.cached for r in second] == [True, False, True, False]
    assert second[0].words == first[0].words and second[2].words == first[2].words


def test_cli_writes_jsonl_and_reports_failures(manifest: Path, tmp_path: Path, run_cli) -> None:
    import asr_audit.cli.align  # noqa: F401 - registers the verb (until it is listed in VERB_MODULES)

    out = tmp_path / "out" / "timings.jsonl"
    code, _, err = run_cli(
        "align", "--corpus", manifest, "--out", out, "--store", tmp_path / "s.sqlite3", "--limit", "3"
    )
    assert code == 0, err
    records = [ClipAlignment.from_dict(json.loads(line)) for line in out.read_text().splitlines()]
    assert [r.clip_id for r in records] == ["libri", "gone", "tts"]
    assert len(records[0].words) == 14 and records[1].words == () and "not found" in (records[1].error or "")
    assert records[2].aligner.name == "sphinx" and records[2].words[2].word == "2011"
    assert "aligned 2/3" in err and "gone" in err
    code, _, err = run_cli(
        "align", "--corpus", manifest, "--out", out, "--store", tmp_path / "s.sqlite3", "--limit", "3"
    )
    assert code == 0 and "(2 from the store)" in err


def test_cli_bad_aligner_is_one_line(manifest: Path, run_cli) -> None:
    import asr_audit.cli.align  # noqa: F401

    code, _, err = run_cli("align", "--corpus", manifest, "--aligner", "mms", "--no-cache")
    assert code == 2 and "unknown aligner 'mms'; available aligners: sphinx, whisper" in err
    assert "Traceback" not in err
