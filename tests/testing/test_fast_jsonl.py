"""The fast JSONL path of the prediction loader reads exactly what iter_jsonl reads, or defers to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_audit.corpus.jsonl import iter_jsonl
from asr_audit.corpus.predfiles import _scan_jsonl, read_prediction_file
from asr_audit.errors import InputFileError

ROW = {"audio_filepath": "a", "text": "Hello\u2028there \u00e9", "pred_text": "hello there", "duration": 1.5}


def _parse_jsonl_fast(path: Path) -> list[tuple[int, dict]] | None:
    """Every row the loader's fast scan reads from a well-formed file; ``None`` if some line is not."""
    failed: list[int] = []
    rows = list(_scan_jsonl(path, failed))
    return None if failed else rows


def write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "m.jsonl"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": 1}\n{"b": [1, 2]}\n',
        b'\xef\xbb\xbf{"a": 1}\r\n{"b": 2}\r\n',  # BOM, CRLF
        b'\n  \n{"a": 1}\n\t\n{"b": 2}',  # blank lines, no final newline
        b'{"a": 1}\n\xc2\xa0\n{"b": 2}\n',  # a line of a no-break space: blank to iter_jsonl
        '{"s": "x\u2028y\u0085z"}\n'.encode(),  # line separators inside strings are not line breaks
        b'   {"a": 1}   \n',
    ],
)
def test_well_formed_files_read_the_same(tmp_path: Path, data: bytes) -> None:
    p = write(tmp_path, data)
    assert _parse_jsonl_fast(p) == list(iter_jsonl(p))


@pytest.mark.parametrize(
    "data, line",
    [
        (b'{"a": 1}\n{"a": \n', 2),
        (b'{"a": 1}\n[1, 2]\n', 2),
        (b'{"a": 1}{"b": 2}\n', 1),
        (b'{"a": 1}\n{"b": "\xff"}\n', 2),
        (b'{"a": 1}\n\xef\xbb\xbf{"b": 2}\n', 2),
    ],
)
def test_malformed_files_give_the_careful_error(tmp_path: Path, data: bytes, line: int) -> None:
    p = write(tmp_path, data.replace(b'{"a": 1}', json.dumps(ROW).encode()))
    assert _parse_jsonl_fast(p) is None
    with pytest.raises(InputFileError, match=f"m.jsonl:{line}: "):
        list(iter_jsonl(p))
    with pytest.raises(InputFileError, match=f"m.jsonl:{line}: "):  # the loader defers to iter_jsonl
        read_prediction_file(p)


text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
rows = st.lists(
    st.fixed_dictionaries(
        {"audio_filepath": text.filter(lambda s: s.strip() != ""), "text": text, "pred_text": st.none() | text}
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_random_files_read_the_same(tmp_path: Path, data: list[dict], eol: str, ascii_only: bool) -> None:
    p = write(tmp_path, "".join(json.dumps(r, ensure_ascii=ascii_only) + eol for r in data).encode())
    assert _parse_jsonl_fast(p) == list(iter_jsonl(p))


def test_prediction_rows_and_errors(tmp_path: Path) -> None:
    rows = [ROW, {**ROW, "audio_filepath": 7, "pred_text": None, "duration": "2", "speaker": 3, "language": ""}]
    pf = read_prediction_file(write(tmp_path, "".join(json.dumps(r) + "\n" for r in rows).encode()))
    a, b = pf.rows["a"], pf.rows["7"]
    assert (a.reference, a.hypothesis, a.duration, a.line) == (ROW["text"], "hello there", 1.5, 1)
    assert (b.hypothesis, b.duration, b.speaker, b.language, b.line) == (None, 2.0, "3", None, 2)
    bad = [ROW, {**ROW, "audio_filepath": "b", "duration": "soon"}]
    with pytest.raises(InputFileError, match=r"m.jsonl:2: field 'duration'"):
        read_prediction_file(write(tmp_path, "".join(json.dumps(r) + "\n" for r in bad).encode()))
    with pytest.raises(InputFileError, match="m.jsonl:2: empty clip id"):
        read_prediction_file(
            write(tmp_path, (json.dumps(ROW) + "\n" + json.dumps({**ROW, "audio_filepath": " "})).encode())
        )
