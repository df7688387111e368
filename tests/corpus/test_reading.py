"""Reading prediction files as people export them (issue 29): column names and mappings, ids
taken from paths, the clip-id overlap check, reference policies, mojibake. Every file here is a
CSV written as spreadsheet / pandas exports write them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from asr_audit.corpus.predfiles import load_predictions, read_prediction_file
from asr_audit.corpus.reading import ReadOptions, check_id_overlap, looks_like_mojibake
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.options import Surface
from asr_audit.text.normalize import get_normalizer

REFS = {"c1": "The cat sat on the mat.", "c2": "A café in Zürich.", "c3": "It is raining.", "c4": "We go home."}


def mangle(text: str) -> str:
    """UTF-8 read as cp1252 (undefined bytes as latin-1): what a misread export holds."""
    return "".join(
        bytes([b]).decode("cp1252") if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else chr(b) for b in text.encode()
    )


def export(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def pandas_export(path: Path, id_of, ref_of=lambda c, r: r, hyp_of=lambda c, r: r.lower()) -> Path:
    """A ``DataFrame.to_csv`` export: an index column with a blank header, then path / sentence /
    prediction_text."""
    rows = [[i, id_of(c), ref_of(c, r), hyp_of(c, r)] for i, (c, r) in enumerate(REFS.items())]
    return export(path, ["", "path", "sentence", "prediction_text"], rows)


def test_an_index_column_and_common_export_names_are_read(tmp_path: Path) -> None:
    p = pandas_export(tmp_path / "m.csv", lambda c: c)
    pf = read_prediction_file(p)
    assert dict(pf.columns) == {"id": "path", "ref": "sentence", "hyp": "prediction_text"}
    assert pf.rows["c2"].reference == "A café in Zürich." and pf.rows["c2"].hypothesis == "a café in zürich."
    q = export(tmp_path / "q.csv", ["files", "actual", "transcription_en-US"], [["c1", "a", "b"]])
    assert dict(read_prediction_file(q).columns) == {"id": "files", "ref": "actual", "hyp": "transcription_en-US"}


def test_columns_are_mapped_by_name_and_a_missing_one_is_named(tmp_path: Path) -> None:
    p = export(tmp_path / "m.csv", ["clip", "gold", "asr_out"], [["c1", "a b", "a b"]])
    with pytest.raises(InputFileError, match=r"no clip id column \(have: clip, gold, asr_out\); fix: .*--id-col"):
        read_prediction_file(p)
    read = ReadOptions(columns={"id": "clip", "ref": "gold", "hyp": "asr_out"})
    assert read_prediction_file(p, read=read).rows["c1"].hypothesis == "a b"
    with pytest.raises(InputFileError, match=r"m.csv:2: no column 'hyp' \(have: clip, gold, asr_out\)"):
        read_prediction_file(p, read=ReadOptions(columns={"id": "clip", "ref": "gold", "hyp": "hyp"}))


def test_flags_and_a_spec_table_build_the_same_options() -> None:
    cli = ReadOptions.from_mapping({"id_col": "clip", "hyp_col": "out", "id_from": "stem"}, Surface.cli())
    spec = ReadOptions.from_mapping(
        {"columns": {"id": "clip", "hyp": "out"}, "id_from": "stem"}, Surface.toml("a.toml", "corpus[0]")
    )
    assert cli == spec and not cli.is_default and ReadOptions().is_default
    with pytest.raises(ConfigError, match=r"^--id-from 'name' is not an id rule; fix: use basename, stem or regex"):
        ReadOptions.from_mapping({"id_from": "name"}, Surface.cli())
    with pytest.raises(ConfigError, match=r"^a.toml: \[corpus\[0\]\] references = \"loose\" is not a reference policy"):
        ReadOptions.from_mapping({"references": "loose"}, Surface.toml("a.toml", "corpus[0]"))
    with pytest.raises(ConfigError, match=r"--id-from 'regex:\(' is not a valid regular expression"):
        ReadOptions.from_mapping({"id_from": "regex:("}, Surface.cli())
    with pytest.raises(ConfigError, match=r"columns .* names the role 'path'"):
        ReadOptions(columns={"path": "x"})


def _mixed_ids(tmp_path: Path) -> Path:
    """The same clips as a Windows mount path in one file and ``./en/clips/<id>.`` in another."""
    folder = tmp_path / "exports"
    pandas_export(folder / "a.csv", lambda c: f"/mnt/c/Users/me/cv/{c}.mp3")
    pandas_export(folder / "b.csv", lambda c: f"./en/clips/{c}.")
    return folder


def test_barely_overlapping_ids_are_refused_with_two_unmatched_ids_from_each_side(tmp_path: Path) -> None:
    folder = _mixed_ids(tmp_path)
    with pytest.raises(InputFileError) as err:
        load_predictions(folder)
    msg = str(err.value)
    assert msg.startswith(f"{folder / 'b.csv'}: its clip ids barely match the other files' (0 of 4 shared")
    assert (
        "here './en/clips/c1.', './en/clips/c2.'; in a.csv: '/mnt/c/Users/me/cv/c1.mp3', '/mnt/c/Users/me/cv/c2.mp3'"
        in msg
    )
    assert "--id-from" in msg and "--min-id-overlap 0" in msg
    assert len(load_predictions(folder, read=ReadOptions(min_id_overlap=0)).references) == 8  # knowingly


def test_ids_taken_from_paths_are_counted_with_examples(tmp_path: Path) -> None:
    pset = load_predictions(_mixed_ids(tmp_path), read=ReadOptions(id_from="stem"))
    assert pset.clip_ids == ["c1", "c2", "c3", "c4"]
    (repair,) = pset.repairs
    assert repair.count == 8 and repair.describe().startswith(
        "clip ids taken by --id-from stem: 8 (e.g. '/mnt/c/Users/me/cv/c1.mp3' -> 'c1'"
    )
    regex = load_predictions(_mixed_ids(tmp_path / "r"), read=ReadOptions(id_from=r"regex:(c\d)\.(mp3)?$"))
    assert regex.clip_ids == ["c1", "c2", "c3", "c4"]


def test_an_id_rule_that_matches_nothing_or_merges_two_rows_is_an_error(tmp_path: Path) -> None:
    p = pandas_export(tmp_path / "a.csv", lambda c: f"/x/{c}.mp3")
    with pytest.raises(InputFileError, match=r"a.csv:2: --id-from regex:zzz takes no id from '/x/c1.mp3'"):
        read_prediction_file(p, read=ReadOptions(id_from="regex:zzz"))
    q = export(tmp_path / "q.csv", ["path", "text", "pred"], [["x/c1.mp3", "a", "a"], ["y/c1.wav", "a", "a"]])
    with pytest.raises(InputFileError, match=r"duplicate clip id 'c1' \(first on line 2\).*--id-from stem gave two"):
        read_prediction_file(q, read=ReadOptions(id_from="stem"))


def _case_conflict(tmp_path: Path) -> Path:
    """Three exports; c.csv writes one reference in lower case without its full stop."""
    folder = tmp_path / "exports"
    for name in ("a", "b"):
        pandas_export(folder / f"{name}.csv", lambda c: c)
    pandas_export(folder / "c.csv", lambda c: c, ref_of=lambda c, r: r.lower().rstrip(".") if c == "c3" else r)
    return folder


def test_the_strict_default_refuses_a_case_only_conflict(tmp_path: Path) -> None:
    with pytest.raises(InputFileError) as err:
        load_predictions(_case_conflict(tmp_path))
    msg = str(err.value)
    assert "c.csv:4: clip 'c3' has reference 'it is raining' here but 'It is raining.' in" in msg
    assert "--references normalized" in msg and "mojibake" not in msg


def test_references_that_normalize_equal_are_accepted_and_reported(tmp_path: Path) -> None:
    folder = _case_conflict(tmp_path)
    pset = load_predictions(folder, read=ReadOptions(references="normalized"), normalize=get_normalizer("whisper"))
    assert pset.references["c3"] == "It is raining."  # the first file's text
    (repair,) = pset.repairs
    assert repair.count == 1
    assert repair.describe() == (
        "references that differ but normalize equal (the first file's text kept): 1 "
        "(e.g. 'It is raining.' -> 'it is raining' (a vs c))"
    )
    # words that differ are still refused, and said to differ after normalizing
    pandas_export(folder / "d.csv", lambda c: c, ref_of=lambda c, r: "It is snowing." if c == "c3" else r)
    with pytest.raises(InputFileError, match=r"d.csv:4: clip 'c3' .*\(they differ after normalizing too\)"):
        load_predictions(folder, read=ReadOptions(references="normalized"), normalize=get_normalizer("whisper"))


def test_one_models_references_replace_the_others(tmp_path: Path) -> None:
    folder = _case_conflict(tmp_path)
    pset = load_predictions(folder, read=ReadOptions(references="from:c"))
    assert pset.references["c3"] == "it is raining"
    (repair,) = pset.repairs
    assert repair.count == 2 and repair.what == "references of other files replaced by c's"
    with pytest.raises(InputFileError, match=r"--references from:zz names no model of the set \(models: a, b, c\)"):
        load_predictions(folder, read=ReadOptions(references="from:zz"))


def _mojibake(tmp_path: Path) -> Path:
    """b.csv misreads its non-ASCII references; c.csv is double-encoded throughout."""
    folder = tmp_path / "exports"
    pandas_export(folder / "a.csv", lambda c: c)
    pandas_export(folder / "b.csv", lambda c: c, ref_of=lambda c, r: mangle(r))
    pandas_export(
        folder / "c.csv",
        lambda c: c,
        ref_of=lambda c, r: mangle(mangle(r)),
        hyp_of=lambda c, r: mangle(mangle(r.lower())),
    )
    return folder


def test_mojibake_is_named_in_the_conflict_and_repaired_only_on_request(tmp_path: Path) -> None:
    assert looks_like_mojibake(mangle("Zürich")) and not looks_like_mojibake("Zürich — “so”")
    folder = _mojibake(tmp_path)
    with pytest.raises(
        InputFileError, match=r"b.csv:3: clip 'c2' .*\('Ã©' in 'A cafÃ© in ZÃ¼ric' looks like mojibake.*--fix-encoding"
    ):
        load_predictions(folder)
    pytest.importorskip("ftfy")
    pset = load_predictions(folder, read=ReadOptions(fix_encoding=True))
    assert pset.references["c2"] == "A café in Zürich."
    assert pset.hypothesis("c", "c2") == "a café in zürich."
    found = {r.what: r for r in pset.repairs}
    assert found["references repaired by --fix-encoding"].count == 2  # b's and c's reference of c2
    assert found["hypotheses repaired by --fix-encoding"].count == 1
    assert "'A cafÃ©" in found["references repaired by --fix-encoding"].describe()


def test_overlap_is_a_share_of_the_smaller_side() -> None:
    a, b = Path("a.csv"), Path("b.csv")
    check_id_overlap([(a, [f"c{i}" for i in range(100)]), (b, ["c1", "c2"])], 0.2)  # a subset: fine
    check_id_overlap([(a, ["c1", "c2", "c3", "c4", "c5"]), (b, ["c1", "x2", "x3", "x4", "x5"])], 0.2)  # 1 of 5
    with pytest.raises(InputFileError, match=r"b.csv: .*\(1 of 6 shared, under 20%\)"):
        check_id_overlap([(a, [f"c{i}" for i in range(6)]), (b, ["c1", *(f"x{i}" for i in range(5))])], 0.2)
