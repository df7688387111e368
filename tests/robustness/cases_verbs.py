"""Bad (and good) inputs for the verbs added since the first robustness pass (issue 31): ``gate``,
``export``, ``longform``, ``mech``, ``normalize`` and ``corpus fresh-*``; one :class:`~cases.Case`
per input, run by ``test_cli_matrix.py`` with the same exit-code contract.

``corpus fresh-*`` cases download from a hostile server on 127.0.0.1 (``tests/support/hostile_http.py``:
short bodies, non-HTTP answers, dripping, silent and huge answers, JSON of the wrong shape, answers
naming ``file:`` URLs), each with ``--download-deadline`` of a few seconds and a pytest deadline
(:data:`DEADLINE`), so a hang fails the case instead of the suite. Nothing outside 127.0.0.1 is
contacted. The ``preds:`` backend locates pieces, so no model weights are loaded.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
from cases import ERROR, OK, Build, Case, a_file, hyps, jsonl, rows
from hostile_http import hostile

from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

DEADLINE = 90  # seconds a case may take in all (pytest-timeout); downloads get --download-deadline 3
VOX = str(VOXPOPULI_EXAMPLES)
PANEL = ",".join(VOXPOPULI_PANEL)
SMALL_PANEL = "whisper-tiny.en,whisper-base.en,distil-small.en"


def fifo(tmp: Path, name: str = "fifo") -> Path:
    p = tmp / name
    os.mkfifo(p)
    return p


def text_file(tmp: Path, body: str | bytes, name: str = "t.txt") -> Path:
    p = tmp / name
    p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return p


# ---------------------------------------------------------------- gate
def _gate(*more: str, candidate: str = "whisper-small.en", baseline: str = "wav2vec2-base-960h") -> Build:
    return lambda t: [
        "gate", "--preds", VOX, "--candidate", candidate, "--baseline", baseline,
        "--panel", SMALL_PANEL, "--no-loo", "--resamples", "200", *more,
    ]  # fmt: skip


def _gate_with(prepare: Callable[[Path], list[str]]) -> Build:
    return lambda t: _gate(*prepare(t))(t)


def _vox_copy(tmp: Path) -> Path:
    return Path(shutil.copytree(VOXPOPULI_EXAMPLES, tmp / "vox"))


GATE_CASES = [
    Case("gate-pass-ok", _gate(), OK),
    Case("gate-regression-exit-1", _gate(candidate="wav2vec2-base-960h", baseline="whisper-small.en"), 1),
    Case("gate-unknown-candidate", _gate(candidate="nope"), ERROR, "'nope'"),
    Case("gate-same-model", _gate(candidate="whisper-small.en", baseline="whisper-small.en"), ERROR, "same model"),
    Case("gate-level-out-of-range", _gate("--level", "0.7"), ERROR, "--level"),
    Case("gate-min-effect-not-a-number", _gate("--min-effect", "wer=x"), ERROR, "--min-effect"),
    Case("gate-unknown-measure", _gate("--measures", "wer,bleu"), ERROR, "bleu"),
    Case("gate-cluster-pattern-without-group", _gate("--cluster-pattern", "zzz"), ERROR, "zzz"),
    Case("gate-cluster-file-missing", _gate_with(lambda t: ["--cluster-file", str(t / "nope.csv")]), ERROR, "nope.csv"),
    Case("gate-cluster-file-fifo", _gate_with(lambda t: ["--cluster-file", str(fifo(t))]), ERROR, "fifo"),
    Case(
        "gate-no-panel-nor-corrected",
        lambda t: ["gate", "--preds", VOX, "--candidate", "whisper-small.en", "--baseline", "distil-small.en"],
        ERROR,
        "--panel",
    ),
    Case(
        "gate-preds-missing",
        lambda t: ["gate", "--preds", str(t / "nope"), "--candidate", "a", "--baseline", "b", "--panel", "x,y,z"],
        ERROR,
        "nope",
    ),  # fmt: skip
    Case(
        "gate-json-is-an-input-file",
        lambda t: [*_gate("--json", str(_vox_copy(t) / "whisper-small.en.jsonl"))(t), "--preds", str(t / "vox")],
        ERROR,
        "would replace the input",
    ),
    Case(
        "gate-markdown-is-the-candidate-file",
        lambda t: _gate("--markdown", str(jsonl(t / "cand.jsonl", rows())), candidate=str(t / "cand.jsonl"))(t),
        ERROR,
        "would replace the input",
    ),
    Case("gate-json-is-a-folder", _gate_with(lambda t: ["--json", str(t)]), ERROR, "is a folder"),
    Case("gate-json-under-a-file", _gate_with(lambda t: ["--json", str(a_file(t) / "g.json")]), ERROR, "f.txt"),
    Case(
        "gate-candidate-file-malformed",
        lambda t: _gate(candidate=str(text_file(t, "{not json\n", "c.jsonl")))(t),
        ERROR,
        "c.jsonl",
    ),
    Case(
        "gate-corrected-refs-missing",
        lambda t: [
            "gate",
            "--preds",
            VOX,
            "--candidate",
            "whisper-small.en",
            "--baseline",
            "distil-small.en",
            "--corrected-refs",
            str(t / "fixed.jsonl"),
        ],
        ERROR,
        "fixed.jsonl",
    ),  # fmt: skip
]


# ---------------------------------------------------------------- export
@functools.lru_cache(maxsize=1)
def _refdis_json() -> str:
    """A refdis --json on the VoxPopuli examples (computed once per process)."""
    import tempfile

    from asr_audit.cli import main

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        args = ["refdis", "--preds", VOX, "--panel", SMALL_PANEL, "--no-loo", "--resamples", "200", "--json", str(out)]
        assert main(args) == 0
        return out.read_text(encoding="utf-8")


def results(tmp: Path, edit: Callable[[dict], object] | None = None, name: str = "r.json") -> Path:
    data = json.loads(_refdis_json())
    if edit is not None:
        data = edit(data)
    p = tmp / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _rename_model(old: str, new: str) -> Callable[[dict], dict]:
    return lambda d: json.loads(json.dumps(d).replace(json.dumps(old), json.dumps(new)))


def _hub(*more: str, edit: Callable[[dict], object] | None = None, out: Callable[[Path], Path] | None = None) -> Build:
    return lambda t: [
        "export", "hub", "--results", str(results(t, edit)), "--dataset-id", "hf-audio/esb", "--task-id", "voxpopuli",
        "--out", str(out(t) if out else t / "cards"), *more,
    ]  # fmt: skip


def _table(out: str = "table.csv", edit: Callable[[dict], object] | None = None) -> Build:
    return lambda t: ["export", "table", "--results", str(results(t, edit)), "--out", str(t / out)]


def _foreign(tmp: Path) -> Path:
    d = tmp / "mine"
    d.mkdir()
    (d / "thesis.tex").write_text("mine\n", encoding="utf-8")
    return d


EXPORT_CASES = [
    Case("export-table-csv-ok", _table(), OK),
    Case("export-table-parquet-ok", _table("table.parquet"), OK),
    Case("export-table-bad-suffix", _table("table.txt"), ERROR, "table.txt"),
    Case(
        "export-table-out-is-the-results",
        lambda t: ["export", "table", "--results", str(results(t, name="r.csv")), "--out", str(t / "r.csv")],
        ERROR,
        "would replace the input",
    ),
    Case(
        "export-table-results-missing",
        lambda t: ["export", "table", "--results", str(t / "no.json"), "--out", str(t / "x.csv")],
        ERROR,
        "no.json",
    ),  # fmt: skip
    Case(
        "export-table-results-not-json",
        lambda t: ["export", "table", "--results", str(text_file(t, "{x", "r.json")), "--out", str(t / "x.csv")],
        ERROR,
        "r.json",
    ),  # fmt: skip
    Case(
        "export-table-results-a-list",
        lambda t: ["export", "table", "--results", str(text_file(t, "[1]", "r.json")), "--out", str(t / "x.csv")],
        ERROR,
        "r.json",
    ),  # fmt: skip
    Case("export-table-models-a-string", _table(edit=lambda d: {**d, "models": "whisper"}), ERROR, "r.json"),
    Case("export-table-no-measures", _table(edit=lambda d: {"probe": "refdis", "models": []}), ERROR, "no per-model"),
    Case("export-hub-ok", _hub(), OK),
    Case("export-hub-model-dotdot", _hub(edit=_rename_model("whisper-tiny.en", "..")), ERROR, "leave the --out"),
    Case("export-hub-model-dot", _hub(edit=_rename_model("whisper-tiny.en", ".")), ERROR, "leave the --out"),
    Case("export-hub-bogus-measure", _hub("--measures", "bogus"), ERROR, "bogus"),
    Case(
        "export-hub-empty-dataset-id",
        lambda t: [*_hub()(t)[:4], "--dataset-id", " ", *_hub()(t)[6:]],
        ERROR,
        "--dataset-id",
    ),  # fmt: skip
    Case("export-hub-date-not-iso", _hub("--date", "yesterday"), ERROR, "yesterday"),
    Case("export-hub-out-is-a-file", _hub(out=a_file), ERROR, "f.txt"),
    Case("export-hub-out-foreign-nonempty", _hub(out=_foreign), ERROR, "mine"),
    Case("export-hub-source-name-without-url", _hub("--source-name", "x"), ERROR, "--source-url"),
    Case("export-hub-unknown-model", _hub("--models", "nope"), ERROR, "nope"),
    Case(
        "export-hub-colliding-folders",
        _hub(
            "--models",
            "a b,a-b",
            edit=lambda d: _rename_model("whisper-base.en", "a-b")(_rename_model("whisper-tiny.en", "a b")(d)),
        ),
        ERROR,
        "share the folder name",
    ),  # fmt: skip
]


# ---------------------------------------------------------------- longform
SPEECH = r"^(?P<group>.+)_(?P<index>\d+)$"


def _longform(*more: str) -> Build:
    return lambda t: ["longform", "--preds", VOX, "--panel", PANEL, "--resamples", "200", *more]


def _group_file(rows_: Callable[[list[str]], list[str]], header: str = "clip_id,recording,index") -> Build:
    def build(t: Path) -> list[str]:
        from asr_audit.corpus.predfiles import load_predictions

        ids = load_predictions(VOXPOPULI_EXAMPLES).clip_ids
        p = text_file(t, "\n".join([header, *rows_(ids)]) + "\n", "map.csv")
        return _longform("--group-file", str(p))(t)

    return build


def _indexed(value: Callable[[int], str]) -> Callable[[list[str]], list[str]]:
    return lambda ids: [f"{c},rec-{k // 50},{value(k)}" for k, c in enumerate(ids)]


LONGFORM_CASES = [
    Case("longform-ok", _longform("--group-pattern", SPEECH), OK),
    Case("longform-no-grouping", _longform(), ERROR, "--group-pattern"),
    Case("longform-pattern-without-group", _longform("--group-pattern", "zzz"), ERROR, "zzz"),
    Case("longform-pattern-matches-nothing", _longform("--group-pattern", "_(chunk)_"), ERROR, "does not match"),
    Case(
        "longform-index-not-a-number",
        _longform("--group-pattern", r"^(?P<group>\d+)-\d+-(?P<index>[A-Z]+)"),
        ERROR,
        "not a number",
    ),  # fmt: skip
    Case(
        "longform-pattern-and-file",
        lambda t: _longform("--group-pattern", "(.+)", "--group-file", str(a_file(t, "m.csv")))(t),
        ERROR,
        "both given",
    ),  # fmt: skip
    Case("longform-group-file-missing", lambda t: _longform("--group-file", str(t / "no.csv"))(t), ERROR, "no.csv"),
    Case("longform-group-file-fifo", lambda t: _longform("--group-file", str(fifo(t)))(t), ERROR, "fifo"),
    Case("longform-index-nan", _group_file(_indexed(lambda k: "nan")), ERROR, "map.csv:2"),
    Case("longform-index-inf", _group_file(_indexed(lambda k: "inf" if k == 3 else str(k))), ERROR, "map.csv:5"),
    Case(
        "longform-duplicate-clip",
        _group_file(lambda ids: [*_indexed(str)(ids), f"{ids[0]},r,9"]),
        ERROR,
        "duplicate clip id",
    ),  # fmt: skip
    Case(
        "longform-no-group-column", _group_file(_indexed(str), header="clip_id,speaker,index"), ERROR, "no group column"
    ),  # fmt: skip
    Case(
        "longform-one-recording",
        _group_file(lambda ids: [f"{c},only,{k}" for k, c in enumerate(ids)]),
        ERROR,
        "at least 2",
    ),  # fmt: skip
    Case(
        "longform-json-is-an-input",
        lambda t: _longform(
            "--group-pattern", SPEECH, "--preds", str(_vox_copy(t)), "--json", str(t / "vox" / "whisper-base.en.jsonl")
        )(t),
        ERROR,
        "would replace the input",
    ),  # fmt: skip
    Case(
        "longform-json-is-a-folder",
        lambda t: _longform("--group-pattern", SPEECH, "--json", str(t))(t),
        ERROR,
        "is a folder",
    ),  # fmt: skip
    Case(
        "longform-csv-under-a-file",
        lambda t: _longform("--group-pattern", SPEECH, "--csv", str(a_file(t) / "x.csv"))(t),
        ERROR,
        "f.txt",
    ),  # fmt: skip
    Case("longform-unknown-model", _longform("--group-pattern", SPEECH, "--models", "nope"), ERROR, "nope"),
]


# ---------------------------------------------------------------- mech (no model is loaded: inputs fail first)
SITE = "decoder.layers.2.out"


def _direction(tmp: Path, name: str = "d", vector: np.ndarray | None = None) -> Path:
    from asr_audit.mech.directions import Direction, save_direction

    v = np.arange(1.0, 5.0) if vector is None else vector
    root = tmp / "dirs"
    save_direction(Direction(name, SITE, v, (v / np.linalg.norm(v))[None, :]), root)
    return root


def _clips(tmp: Path) -> Path:
    """A one-clip manifest (the steer verb reads its corpus before the directions; the audio is never reached)."""
    path = tmp / "clips.jsonl"
    path.write_text(json.dumps({"id": "c0", "audio_filepath": "c0.wav", "text": "a b"}) + "\n")
    return path


def _steer(prepare: Callable[[Path], Path], *more: str, name: str = "d", corpus: str = "") -> Build:
    return lambda t: [
        "mech", "steer", "-m", "whisper-tiny.en-pt", "-c", str(t / corpus if corpus else _clips(t)), "--truth", str(t),
        "--direction", name, "--directions", str(prepare(t)), *more,
    ]  # fmt: skip


def _damaged(change: Callable[[Path], object]) -> Callable[[Path], Path]:
    def build(t: Path) -> Path:
        root = _direction(t)
        change(root)
        return root

    return build


def _meta(body: object) -> Callable[[Path], object]:
    return lambda root: (root / "d.json").write_text(json.dumps(body), encoding="utf-8")


def _without_site(root: Path) -> None:
    meta = json.loads((root / "d.json").read_text())
    del meta["site"]
    (root / "d.json").write_text(json.dumps(meta))


def _nan_vector(root: Path) -> None:
    np.savez(root / "d.npz", vector=np.array([np.nan, 1.0, 1.0, 1.0]), basis=np.ones((1, 4)) / 2)


def _capture(*more: str) -> Build:
    return lambda t: [
        "mech", "capture", "-m", "whisper-tiny.en-pt", "-c", str(t / "m.jsonl"), "-o", str(t / "caps"), *more,
    ]  # fmt: skip


MECH_CASES = [
    Case("mech-capture-bad-pool", _capture("--sites", "encoder.layers.2.out", "--pool", "max"), ERROR, "--pool"),
    Case("mech-capture-bad-dtype", _capture("--sites", "encoder.layers.2.out", "--dtype", "int8"), ERROR, "--dtype"),
    Case(
        "mech-capture-out-is-a-file",
        lambda t: [*_capture("--sites", "encoder.layers.2.out")(t), "-o", str(a_file(t))],
        ERROR,
        "f.txt",
    ),  # fmt: skip
    Case("mech-steer-direction-missing", _steer(lambda t: t / "dirs"), ERROR, "is not a folder"),
    Case(
        "mech-steer-direction-json-not-json",
        _steer(_damaged(lambda r: (r / "d.json").write_text("{x"))),
        ERROR,
        "d.json",
    ),  # fmt: skip
    Case("mech-steer-direction-json-list", _steer(_damaged(_meta([1, 2]))), ERROR, "d.json"),
    Case(
        "mech-steer-direction-json-not-utf8",
        _steer(_damaged(lambda r: (r / "d.json").write_bytes(b"\xff\xfe{"))),
        ERROR,
        "d.json",
    ),  # fmt: skip
    Case("mech-steer-direction-without-site", _steer(_damaged(_without_site)), ERROR, "site"),
    Case(
        "mech-steer-direction-npz-truncated",
        _steer(_damaged(lambda r: (r / "d.npz").write_bytes((r / "d.npz").read_bytes()[:40]))),
        ERROR,
        "d.npz",
    ),
    Case("mech-steer-direction-npz-missing", _steer(_damaged(lambda r: (r / "d.npz").unlink())), ERROR, "d.json"),
    Case("mech-steer-direction-nan", _steer(_damaged(_nan_vector)), ERROR, "NaN"),
    Case(
        "mech-steer-direction-hash-mismatch",
        _steer(_damaged(lambda r: np.savez(r / "d.npz", vector=np.ones(4), basis=np.ones((1, 4)) / 2))),
        ERROR,
        "hash",
    ),  # fmt: skip
    Case("mech-steer-bad-mode", _steer(_direction, "--mode", "bogus"), ERROR, "bogus"),
    Case("mech-steer-bad-positions", _steer(_direction, "--positions", "x"), ERROR, "--positions"),
    Case("mech-steer-rank-too-high", _steer(_direction, "--k", "3"), ERROR, "rank"),
    Case(
        "mech-steer-json-under-a-file",
        lambda t: _steer(_direction, "--json", str(a_file(t) / "s.json"))(t),
        ERROR,
        "f.txt",
    ),  # fmt: skip
    Case("mech-steer-corpus-missing", _steer(_direction, corpus="none.jsonl"), ERROR, "none.jsonl"),
    Case(
        "mech-capture-bad-site",
        lambda t: [
            "mech",
            "capture",
            "-m",
            "whisper-tiny.en-pt",
            "-c",
            str(t / "m.jsonl"),
            "--sites",
            "nowhere.7",
            "-o",
            str(t / "caps"),
        ],
        ERROR,
        "nowhere.7",
    ),  # fmt: skip
    Case(
        "mech-direction-capture-missing",
        lambda t: ["mech", "direction", "--a", str(t / "a"), "--b", str(t / "b"), "--name", "x"],
        ERROR,
        "{tmp}/a",
    ),  # fmt: skip
    Case(
        "mech-direction-capture-is-a-file",
        lambda t: ["mech", "direction", "--a", str(a_file(t)), "--b", str(t / "b"), "--name", "x"],
        ERROR,
        "f.txt",
    ),  # fmt: skip
]


# ---------------------------------------------------------------- normalize
def _normalize_file(body: str | bytes, *more: str) -> Build:
    return lambda t: ["normalize", "--file", str(text_file(t, body)), *more]


NORMALIZE_CASES = [
    Case("normalize-text-ok", lambda t: ["normalize", "Mr. Brown's colour, thirty six at 10:00 AM"], OK),
    Case("normalize-file-ok", _normalize_file("one two\nMr. Smith\n"), OK),
    Case("normalize-bom-file-ok", _normalize_file("\ufeffone two\n"), OK),
    Case("normalize-markup-text-ok", lambda t: ["normalize", "[red]not markup[/red] [/x]"], OK, "not markup"),
    Case("normalize-json-ok", lambda t: ["normalize", "a b", "--json", str(t / "n.json")], OK),
    Case("normalize-nothing", lambda t: ["normalize"], ERROR, "TEXT"),
    Case("normalize-text-and-file", lambda t: ["normalize", "x", "--file", str(a_file(t))], ERROR, "not both"),
    Case("normalize-file-missing", lambda t: ["normalize", "--file", str(t / "no.txt")], ERROR, "no.txt"),
    Case("normalize-file-fifo", lambda t: ["normalize", "--file", str(fifo(t))], ERROR, "FIFO"),
    Case("normalize-file-is-a-folder", lambda t: ["normalize", "--file", str(t)], ERROR, "folder"),
    Case("normalize-file-not-utf8", _normalize_file(b"caf\xe9\n"), ERROR, "t.txt"),
    Case("normalize-file-empty", _normalize_file("\n\n"), ERROR, "t.txt"),
    Case("normalize-unknown-normalizer", lambda t: ["normalize", "x", "--compare", "whisper,bogus"], ERROR, "bogus"),
    Case("normalize-200000-digits", _normalize_file("one\n" + "1" * 200_000 + "\n"), ERROR, "t.txt:2"),
    Case(
        "normalize-json-is-the-file",
        lambda t: ["normalize", "--file", str(a_file(t)), "--json", str(t / "f.txt")],
        ERROR,
        "would replace the input",
    ),  # fmt: skip
    Case("normalize-json-is-a-folder", lambda t: ["normalize", "x", "--json", str(t)], ERROR, "is a folder"),
    Case(
        "normalize-json-under-a-file", lambda t: ["normalize", "x", "--json", str(a_file(t) / "n.json")], ERROR, "f.txt"
    ),  # fmt: skip
]


# ---------------------------------------------------------------- corpus fresh-* against a hostile server
# a 3 s download deadline, 1 s where the case is the deadline itself (a server that never finishes)
def _librivox(api: Callable[[Path], str], *more: str, deadline: str = "3") -> Build:
    return lambda t: [
        "corpus", "fresh-librivox", "--since", "2025-01-01", "--until", "2025-12-31", "-o", str(t / "out"),
        "-m", f"preds:{hyps(t)}", "--store", str(t / "s.sqlite"), "--api", api(t), "--download-deadline", deadline,
        *more,
    ]  # fmt: skip


def _europarl(api: Callable[[Path], str], *more: str, deadline: str = "3") -> Build:
    return lambda t: [
        "corpus", "fresh-europarl", "--since", "2025-10-06", "--until", "2025-10-09", "-o", str(t / "out"),
        "-m", f"preds:{hyps(t)}", "--store", str(t / "s.sqlite"), "--api", api(t), "--download-deadline", deadline,
        *more,
    ]  # fmt: skip


def _at(kind: str) -> Callable[[Path], str]:
    return lambda t: f"{hostile().base}/{kind}"


def _doc(document: object) -> Callable[[Path], str]:
    """A hostile-server URL answering ``document`` (the case folder names it: unique per case)."""
    return lambda t: hostile().answer(f"{t.parent.name}-{t.name}", document)


def book(sections: object, **extra: object) -> dict:
    return {"books": [{"id": "900", "title": "T", "language": "English", "sections": sections, **extra}]}


def section(**over: object) -> dict:
    return {"id": "9001", "section_number": "1", "listen_url": "http://127.0.0.1:9/a.mp3", "language": "English",
            "readers": [{"reader_id": "19", "display_name": "R"}], **over}  # fmt: skip


def speech_item(lang3: str = "ENG", **extra: object) -> dict:
    return {
        "had_activity_type": "https://data.europarl.europa.eu/def/ep-activities/PLENARY_DEBATE_SPEECH",
        "activity_start_date": "2025-10-08T09:10:00+02:00",
        "activity_end_date": "2025-10-08T09:12:00+02:00",
        "recorded_in_a_realization_of": [
            {
                "identifier": "eli/dl/doc/CRE-10-2025-10-08-ITM-003_EN",
                "originalLanguage": [f"lang/{lang3}"],
                "api:xmlFragment": {"en": "<speech><p>Hello there.</p></speech>"},
            }
        ],  # fmt: skip
        **extra,
    }


def _secret_url(tmp: Path, name: str = "secret.txt") -> str:
    """A local file an attacker would want copied (its ``file:`` URL)."""
    return text_file(tmp, "TOP-SECRET-CONTENT\n", name).as_uri()


def _naming_file(field: str) -> Callable[[Path], str]:
    def build(t: Path) -> str:
        secret = _secret_url(t)
        sec = section(listen_url=secret) if field == "listen_url" else section()
        extra = (
            {"url_text_source": secret}
            if field == "text"
            else {
                "url_text_source": hostile().answer("book-text", b"Chapter one. It was a bright cold day.") + "/b.txt"
            }
        )
        return _doc(book([sec], **extra))(t)

    return build


FRESH_CASES = [
    Case("fresh-librivox-truncated-answer", _librivox(_at("truncated")), ERROR, "ended early"),
    Case("fresh-librivox-not-http", _librivox(_at("not-http")), ERROR, "not HTTP"),
    Case("fresh-librivox-too-many-headers", _librivox(_at("many-headers")), ERROR, "/many-headers/"),
    Case("fresh-librivox-slow-drip", _librivox(_at("drip"), deadline="1"), ERROR, "not downloaded within 1 s"),
    Case("fresh-librivox-silent-server", _librivox(_at("silent"), deadline="1"), ERROR, "not downloaded within 1 s"),
    Case("fresh-librivox-huge-declared", _librivox(_at("huge-declared")), ERROR, "larger than"),
    Case("fresh-librivox-huge-streamed", _librivox(_at("huge")), ERROR, "larger than"),
    Case("fresh-librivox-empty-200", _librivox(_at("empty-200")), ERROR, "not JSON"),
    Case("fresh-librivox-html-200", _librivox(_at("html-200")), ERROR, "not JSON"),
    Case("fresh-librivox-redirect-to-file", _librivox(_at("redirect-file")), ERROR, "file:///etc/hostname"),
    Case("fresh-librivox-redirect-to-ftp", _librivox(_at("redirect-ftp")), ERROR, "ftp://127.0.0.1/x"),
    Case("fresh-librivox-unreachable", _librivox(lambda t: "http://127.0.0.1:9/api"), ERROR, "127.0.0.1:9"),
    Case("fresh-librivox-books-a-number", _librivox(_doc({"books": 5})), ERROR, "'books' is a int"),
    Case("fresh-librivox-sections-a-number", _librivox(_doc(book(5))), ERROR, "'sections' is a int"),
    Case("fresh-librivox-readers-a-number", _librivox(_doc(book([section(readers=5)]))), ERROR, "'readers' is a int"),
    Case("fresh-librivox-json-a-list", _librivox(_doc([1, 2])), ERROR, "expected a JSON object"),
    Case("fresh-librivox-deeply-nested-json", _librivox(_doc(b"[" * 100_000 + b"]" * 100_000)), ERROR, "not JSON"),
    Case("fresh-librivox-listen-url-names-a-file", _librivox(_naming_file("listen_url")), ERROR, "no utterance kept"),
    Case("fresh-librivox-text-url-names-a-file", _librivox(_naming_file("text")), ERROR, "no utterance kept"),
    Case(
        "fresh-librivox-listen-url-ftp",
        _librivox(
            _doc(book([section(listen_url="ftp://127.0.0.1/a.mp3")], url_text_source="http://127.0.0.1:9/b.txt"))
        ),
        ERROR,
        "no utterance kept",
    ),  # fmt: skip
    Case("fresh-librivox-no-section", _librivox(_doc({"error": "Audiobooks could not be found"})), ERROR, "widen"),
    Case(
        "fresh-librivox-readers-fifo",
        lambda t: _librivox(_at("empty-200"), "--readers", str(fifo(t)))(t),
        ERROR,
        "FIFO",
    ),  # fmt: skip
    Case(
        "fresh-librivox-out-is-a-file",
        lambda t: [*_librivox(_at("empty-200"))(t), "-o", str(a_file(t))],
        ERROR,
        "f.txt",
    ),  # fmt: skip
    Case(
        "fresh-librivox-out-foreign-nonempty",
        lambda t: [*_librivox(_at("empty-200"))(t), "-o", str(_foreign(t))],
        ERROR,
        "mine",
    ),  # fmt: skip
    Case(
        "fresh-librivox-bad-deadline",
        _librivox(_at("empty-200"), "--download-deadline", "0"),
        ERROR,
        "--download-deadline",
    ),  # fmt: skip
    Case("fresh-librivox-api-not-a-url", _librivox(lambda t: "librivox.org/api"), ERROR, "scheme-less"),
    Case("fresh-europarl-truncated-answer", _europarl(_at("truncated")), ERROR, "ended early"),
    Case("fresh-europarl-slow-drip", _europarl(_at("drip"), deadline="1"), ERROR, "not downloaded within 1 s"),
    Case("fresh-europarl-data-a-number", _europarl(_doc({"data": 5})), ERROR, "'data' list"),
    Case(
        "fresh-europarl-total-not-a-count",
        _europarl(_doc({"data": [speech_item()], "meta": {"total": "lots"}})),
        ERROR,
        "meta.total",
    ),  # fmt: skip
    Case(
        "fresh-europarl-meta-a-list",
        _europarl(_doc({"data": [speech_item("DEU")], "meta": [1]})),
        ERROR,
        "no plenary speech",
    ),  # fmt: skip
    Case(
        "fresh-europarl-participation-a-list",
        _europarl(_doc({"data": [speech_item(had_participation=[1])]}), "--media", "http://127.0.0.1:9"),
        ERROR,
        "no utterance kept",
    ),  # fmt: skip
    Case("fresh-europarl-html-200", _europarl(_at("html-200")), ERROR, "not JSON"),
]

VERB_CASES = [*GATE_CASES, *EXPORT_CASES, *LONGFORM_CASES, *MECH_CASES, *NORMALIZE_CASES, *FRESH_CASES]
COUNTS = {
    "gate": len(GATE_CASES),
    "export": len(EXPORT_CASES),
    "longform": len(LONGFORM_CASES),
    "mech": len(MECH_CASES),
    "normalize": len(NORMALIZE_CASES),
    "corpus fresh-*": len(FRESH_CASES),
}
