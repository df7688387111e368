"""Audio at fsspec URLs (what a Ray worker reads where it runs): the same samples as the path, and a
missing or unreadable URL is the clip's failure, named like a path's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audio_fixtures import LIBRIVOX

from asr_audit.audio.io import ClipAudioError, is_url, load_clip_audio
from asr_audit.corpus.clips import Clip
from asr_audit.corpus.spec import load_corpus


def test_file_url_reads_the_same_audio_as_the_path(tmp_path: Path) -> None:
    path = LIBRIVOX / "0930.flac"
    by_path = load_clip_audio(Clip(id="c", reference="", audio_path=str(path)))
    by_url = load_clip_audio(Clip(id="c", reference="", audio_path=path.resolve().as_uri()))
    assert by_url.audio_hash == by_path.audio_hash
    with pytest.raises(ClipAudioError, match="audio file not found"):
        load_clip_audio(Clip(id="c", reference="", audio_path=(tmp_path / "gone.flac").as_uri()))
    (tmp_path / "junk.flac").write_bytes(b"not audio")
    with pytest.raises(ClipAudioError, match="unreadable audio"):
        load_clip_audio(Clip(id="c", reference="", audio_path=(tmp_path / "junk.flac").as_uri()))
    with pytest.raises(ClipAudioError, match="cannot read the URL"):  # no file system for this scheme
        load_clip_audio(Clip(id="c", reference="", audio_path="nosuchscheme://bucket/a.flac"))


def test_manifest_keeps_urls_as_written(tmp_path: Path) -> None:
    rows = [{"audio_filepath": "s3://bucket/a.flac", "text": "a"}, {"audio_filepath": "b.flac", "text": "b"}]
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    clips = load_corpus(str(tmp_path / "m.jsonl")).clips
    assert [c.audio_path for c in clips] == ["s3://bucket/a.flac", str(tmp_path / "b.flac")]
    assert is_url("hf://datasets/x/a.flac") and not is_url(str(tmp_path / "b.flac"))
