"""Corpus spec resolution: manifests, LibriSpeech layout, Kaldi dirs, saved HF datasets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from audio_fixtures import LIBRIVOX, librivox_refs, write_manifest_rows

from asr_audit.corpus.clips import ArraySource, Clip
from asr_audit.corpus.spec import load_corpus
from asr_audit.errors import ConfigError, InputFileError


def test_librispeech_layout(librispeech_dir: Path) -> None:
    corpus = load_corpus(librispeech_dir)
    assert corpus.name == "test-clean" and corpus.split == "test"
    assert [c.id for c in corpus] == ["19-198-0880", "19-198-0890", "19-198-0930"]
    first = corpus.clips[0]
    assert first.speaker == "19" and first.reference == librivox_refs()["0880"]
    assert first.audio_path is not None
    assert Path(first.audio_path).is_file() and first.audio_path.endswith(".flac")


def test_manifest_relative_paths_and_fields(tmp_path: Path) -> None:
    sub = tmp_path / "m"
    sub.mkdir()
    p = write_manifest_rows(
        sub / "dev.jsonl",
        [
            {"audio_filepath": "a/x.wav", "text": "hello", "duration": 1.5, "speaker": 7, "language": "en"},
            {"audio_filepath": "/abs/y.flac", "text": "", "id": "y"},
        ],
    )
    corpus = load_corpus(p)
    a, b = corpus.clips
    assert a.id == "a/x.wav" and a.audio_path == str(sub / "a" / "x.wav")
    assert a.duration == 1.5 and a.speaker == "7" and a.language == "en"
    assert b.id == "y" and b.audio_path == "/abs/y.flac" and b.reference == "" and b.duration is None
    assert corpus.name == "dev"


@pytest.mark.parametrize(
    ("lines", "line_no", "needle"),
    [
        (['{"audio_filepath": "a.wav", "text": "x"}', "{not json"], 2, "bad JSON"),
        (['{"audio_filepath": "a.wav"}'], 1, "missing reference field 'text'"),
        (['{"text": "x"}'], 1, "audio_filepath"),
        (['{"audio_filepath": "a.wav", "text": "x", "duration": "long"}'], 1, "duration"),
        (
            ['{"audio_filepath": "a.wav", "text": "x"}', "", '{"audio_filepath": "a.wav", "text": "y"}'],
            3,
            "duplicate clip id",
        ),
        (["[1, 2]"], 1, "expected a JSON object"),
    ],
)
def test_manifest_errors_name_file_line_and_fix(tmp_path: Path, lines: list[str], line_no: int, needle: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFileError) as err:
        load_corpus(p)
    msg = str(err.value)
    assert f"{p}:{line_no}:" in msg and needle in msg and "fix:" in msg


def _kaldi(tmp_path: Path, scp: str, text: str, utt2spk: str | None = None) -> Path:
    d = tmp_path / "kaldi_dev"
    d.mkdir()
    (d / "wav.scp").write_text(scp)
    (d / "text").write_text(text)
    if utt2spk is not None:
        (d / "utt2spk").write_text(utt2spk)
    return d


def test_kaldi_dir(tmp_path: Path) -> None:
    d = _kaldi(
        tmp_path,
        f"u2 {LIBRIVOX / '0930.flac'}\nu1 audio/one.wav\n",
        "u1 HELLO  WORLD\nu2 HE MIGHT\n",
        "u1 spkA\nu2 spkB\n",
    )
    corpus = load_corpus(d)
    assert [c.id for c in corpus] == ["u1", "u2"]
    assert corpus.clips[0].audio_path == str(d / "audio" / "one.wav")
    assert corpus.clips[0].reference == "HELLO  WORLD" and corpus.clips[0].speaker == "spkA"
    assert corpus.clips[1].audio_path == str(LIBRIVOX / "0930.flac")


@pytest.mark.parametrize(
    ("scp", "text", "needle", "where"),
    [
        ("u1 sox in.sph -t wav - |\n", "u1 hi\n", "piped command", "wav.scp:1"),
        ("u1 feats.ark:1234\n", "u1 hi\n", "archive", "wav.scp:1"),
        ("u1 a.wav\nu2 b.wav\n", "u1 hi\n", "no reference", "wav.scp:2"),
        ("u1 a.wav\n", "u1 hi\nu9 who\n", "no audio in wav.scp", "text:2"),
    ],
)
def test_kaldi_errors(tmp_path: Path, scp: str, text: str, needle: str, where: str) -> None:
    with pytest.raises(InputFileError) as err:
        load_corpus(_kaldi(tmp_path, scp, text))
    assert needle in str(err.value) and where in str(err.value) and "fix:" in str(err.value)


def test_unknown_specs_list_the_forms(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file or directory.*LibriSpeech"):
        load_corpus(tmp_path / "nope")
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(InputFileError, match="neither a Kaldi"):
        load_corpus(tmp_path / "empty_dir")
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(InputFileError, match="unknown corpus file type"):
        load_corpus(tmp_path / "x.txt")


def test_hf_dataset_saved_to_disk(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    refs = librivox_refs()
    ds = datasets.Dataset.from_dict(
        {
            "audio": [str(LIBRIVOX / "0880.flac"), str(LIBRIVOX / "0930.flac")],
            "sentence": [refs["0880"], refs["0930"]],
            "id": ["a", "b"],
            "speaker_id": [1, 2],
        }
    ).cast_column("audio", datasets.Audio(decode=False))
    ds.save_to_disk(str(tmp_path / "single"))
    datasets.DatasetDict({"validation": ds}).save_to_disk(str(tmp_path / "dict"))

    corpus = load_corpus(f"hf-dataset:{tmp_path / 'single'}")
    assert [c.id for c in corpus] == ["a", "b"] and corpus.clips[1].reference == refs["0930"]
    assert corpus.clips[0].speaker == "1" and corpus.clips[0].audio_path is None

    from asr_audit.audio.io import load_audio

    expected = load_audio(Clip(id="x", reference="", audio_path=str(LIBRIVOX / "0930.flac")))
    np.testing.assert_array_equal(load_audio(corpus.clips[1]), expected)

    dcorpus = load_corpus(f"hf-dataset:{tmp_path / 'dict'}/validation")
    assert dcorpus.split == "validation" and len(dcorpus) == 2
    with pytest.raises(ConfigError, match="has splits validation"):
        load_corpus(f"hf-dataset:{tmp_path / 'dict'}")


def test_hf_hub_spec_needs_three_parts() -> None:
    with pytest.raises(ConfigError, match="<id>/<config>/<split>"):
        load_corpus("hf-dataset:justaname")


def test_hf_hub_dataset_offline_is_a_clear_error(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    pytest.importorskip("datasets")
    # a fresh process, so that the offline switches are read when `datasets` is imported
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "asr_audit",
            "transcribe",
            "--model",
            "sphinx:en-us",
            "--corpus",
            "hf-dataset:no-such-org/no-such-set/clean/test",
            "--out",
            str(tmp_path / "o"),
            "--store",
            str(tmp_path / "s.sqlite"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "could not load dataset 'no-such-org/no-such-set' config 'clean' split 'test'" in proc.stderr
    assert "fix:" in proc.stderr


def test_clip_derive_records_provenance() -> None:
    clip = Clip(id="c1", reference="x", audio_path="c1.wav", speaker="s")
    d = clip.derive("silence0-1", np.zeros(8000, dtype=np.float32), 16000).derive(
        "noise10db", np.ones(4, np.float32), 16000
    )
    assert d.id == "c1_silence0-1_noise10db" and d.provenance == ("silence0-1", "noise10db")
    assert isinstance(d.source, ArraySource) and d.speaker == "s" and d.duration == 4 / 16000
    with pytest.raises(ValueError):
        Clip(id="c", reference="", audio_path=None)
    with pytest.raises(ValueError):
        clip.derive("has space", np.zeros(1), 16000)


def test_manifest_round_trip(tmp_path: Path) -> None:
    from asr_audit.corpus.manifests import write_manifest

    clips = [Clip(id="k", reference="a b", audio_path=str(tmp_path / "k.wav"), duration=1.0, speaker="s")]
    p = write_manifest(clips, tmp_path / "out.jsonl")
    assert json.loads(p.read_text())["id"] == "k"
    back = load_corpus(p).clips[0]
    assert (back.id, back.reference, back.audio_path, back.duration, back.speaker) == (
        "k",
        "a b",
        clips[0].audio_path,
        1.0,
        "s",
    )
