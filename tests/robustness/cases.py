"""Bad (and good) inputs for the CLI robustness matrix: one :class:`Case` per input.

Each case builds its inputs under a temporary folder and returns the argv; the matrix test runs
it through :func:`asr_audit.cli.main` and checks the exit-code contract. To add a case, append a
``Case`` to :data:`CASES` (see docs/reliability.md).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from asr_audit.data import LIBRIVOX_MANIFEST, VOXPOPULI_EXAMPLES

OK, ERROR, INTERRUPTED = 0, 2, 130
Build = Callable[[Path], list[str]]


@dataclass(frozen=True)
class Case:
    """One CLI input: ``build(tmp)`` writes what it needs and returns the argv.

    ``code`` is the expected exit code; for ``ERROR`` the single ``error:`` line must contain
    ``needle`` (the input it names; ``{tmp}`` is replaced by the case's folder) and ``fix:``.
    """

    id: str
    build: Build
    code: int
    needle: str = ""
    xfail: str = ""  # a known gap: the issue and defect that will fix it (strict: passing fails)


# ---------------------------------------------------------------- input builders
def rows(n: int = 4, **over: object) -> list[dict]:
    return [
        {"id": f"c{i}", "reference": f"the cat sat on mat {i}", "hypothesis": f"the cat sat on mat {i}", **over}
        for i in range(n)
    ]


def jsonl(path: Path, items: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


def folder(tmp: Path, files: dict[str, str | bytes]) -> Path:
    d = tmp / "preds"
    d.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (d / name).write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return d


def good_folder(tmp: Path, extra: dict[str, str | bytes] | None = None) -> Path:
    d = folder(tmp, extra or {})
    for m in ("ma", "mb", "mc"):
        jsonl(d / f"{m}.jsonl", rows())
    return d


def vox(tmp: Path) -> Path:
    return Path(shutil.copytree(VOXPOPULI_EXAMPLES, tmp / "vox"))


def store(path: Path) -> Path:
    from asr_audit.store import Store

    with Store(path) as st:
        st.put_transcripts("b", [("h", "t", None)])
    return path


def foreign_db(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE users (id INTEGER)")
    db.commit()
    db.close()
    return path


def spec(tmp: Path, body: str) -> Path:
    p = tmp / "audit.toml"
    p.write_text(body, encoding="utf-8")
    return p


PRED_SPEC = """title = "t"
output = "{out}"
store = "{store}"
[[corpus]]
name = "vox"
predictions = "{preds}"
panel = ["whisper-base.en", "whisper-small.en", "wav2vec2-base-960h"]
[probes.refdis]
resamples = 20
loo = false  # three panel members: too few for leave-one-out
{extra}
"""


def pred_spec(tmp: Path, extra: str = "", preds: str | None = None) -> Path:
    return spec(
        tmp,
        PRED_SPEC.format(
            out=tmp / "out", store=tmp / "s.sqlite", preds=preds if preds is not None else vox(tmp), extra=extra
        ),
    )


def pf(files: dict[str, str | bytes], verb: str = "coverage", *more: str) -> Build:
    """A prediction folder holding ``files``, given to ``verb``."""
    return lambda t: [verb, "--preds", str(folder(t, files)), *more]


def _help(verb: str) -> Build:
    return lambda t: [verb, "--help"]


def _binary(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------- the cases
GOOD_ROWS = "".join(json.dumps(r) + "\n" for r in rows())
CASES: list[Case] = [
    # --- good inputs: exit 0
    Case("coverage-ok", lambda t: ["coverage", "--preds", str(vox(t))], OK),
    Case("coverage-bom-ok", pf({"m.jsonl": "\ufeff" + GOOD_ROWS}), OK),
    Case("coverage-crlf-ok", pf({"m.jsonl": GOOD_ROWS.replace("\n", "\r\n")}), OK),
    Case("coverage-blank-lines-ok", pf({"m.jsonl": GOOD_ROWS.replace("\n", "\n\n")}), OK),
    Case("coverage-csv-ok", pf({"m.csv": "id,reference,hypothesis\nc0,a b,a b\nc1,c d,c\n"}), OK),
    Case("coverage-file-ok", lambda t: ["coverage", "--preds", str(jsonl(t / "m.jsonl", rows()))], OK),
    Case(
        "refdis-ok",
        lambda t: [
            "refdis",
            "--preds",
            str(vox(t)),
            "--panel",
            "whisper-base.en,whisper-small.en,wav2vec2-base-960h",
            "--no-loo",
            "--resamples",
            "20",
        ],
        OK,
    ),
    Case("switch-rate-ok", lambda t: ["switch-rate", "--preds", str(vox(t)), "--min-per-arm", "1"], OK),
    Case(
        "refdis-json-csv-ok",
        lambda t: [
            "refdis",
            "--preds",
            str(vox(t)),
            "--panel",
            "whisper-base.en,whisper-small.en,wav2vec2-base-960h",
            "--no-loo",
            "--resamples",
            "20",
            "--json",
            str(t / "new" / "r.json"),
            "--csv",
            str(t / "new" / "r.csv"),
        ],
        OK,
    ),
    Case("run-prediction-spec-ok", lambda t: ["run", str(pred_spec(t)), "--no-progress"], OK),
    Case(
        "merge-ok",
        lambda t: ["merge", "--into", str(t / "all.sqlite"), str(store(t / "a.sqlite")), str(store(t / "b.sqlite"))],
        OK,
    ),
    Case(
        "merge-twice-ok",
        lambda t: ["merge", "--into", str(t / "all.sqlite"), str(store(t / "a.sqlite")), str(t / "a.sqlite")],
        OK,
    ),
    # --- prediction inputs (coverage)
    Case("preds-missing-path", lambda t: ["coverage", "--preds", str(t / "nope")], ERROR, "{tmp}/nope"),
    Case("preds-empty-folder", lambda t: ["coverage", "--preds", str(folder(t, {}))], ERROR, "{tmp}/preds"),
    Case("preds-only-unrelated-files", pf({"README.txt": "hello"}), ERROR, "{tmp}/preds"),
    Case("preds-empty-file", pf({"m.jsonl": ""}), ERROR, "m.jsonl"),
    Case("preds-malformed-json-line", pf({"m.jsonl": GOOD_ROWS + "{not json\n"}), ERROR, "m.jsonl"),
    Case(
        "preds-huge-hypothesis",
        pf(
            {
                "m.jsonl": GOOD_ROWS
                + json.dumps({"id": "big", "reference": "a b", "hypothesis": "word " * 200_001})
                + "\n"
            }
        ),
        ERROR,
        "m.jsonl:5",
    ),
    Case(
        "preds-huge-reference-csv",
        pf({"m.csv": "id,reference,hypothesis\nc0," + "x" * 1_000_001 + ",a\n"}),
        ERROR,
        "m.csv",
    ),
    Case("preds-json-array-line", pf({"m.jsonl": "[1, 2]\n"}), ERROR, "m.jsonl"),
    Case("preds-row-missing-id", pf({"m.jsonl": '{"reference": "a", "hypothesis": "a"}\n'}), ERROR, "m.jsonl"),
    Case("preds-row-missing-reference", pf({"m.jsonl": '{"id": "a", "hypothesis": "a"}\n'}), ERROR, "m.jsonl"),
    Case(
        "preds-hypothesis-is-number",
        pf({"m.jsonl": '{"id": "a", "reference": "a", "hypothesis": 5}\n'}),
        ERROR,
        "m.jsonl",
    ),
    Case(
        "preds-nan-hypothesis", pf({"m.jsonl": '{"id": "a", "reference": "a", "hypothesis": NaN}\n'}), ERROR, "m.jsonl"
    ),
    Case("preds-duplicate-ids", pf({"m.jsonl": GOOD_ROWS + GOOD_ROWS.splitlines(keepends=True)[0]}), ERROR, "m.jsonl"),
    Case(
        "preds-non-utf8", pf({"m.jsonl": b'{"id": "a", "reference": "caf\xe9", "hypothesis": "a"}\n'}), ERROR, "m.jsonl"
    ),
    Case("preds-binary-garbage", pf({"m.jsonl": bytes(range(256)) * 4}), ERROR, "m.jsonl"),
    Case(
        "preds-reference-conflict",
        pf({"ma.jsonl": GOOD_ROWS, "mb.jsonl": GOOD_ROWS.replace("mat 0", "rug 0")}),
        ERROR,
        "c0",
    ),
    Case("preds-csv-missing-columns", pf({"m.csv": "id,text\nc0,a\n"}), ERROR, "m.csv"),
    Case("preds-csv-unclosed-quote", pf({"m.csv": 'id,reference,hypothesis\nc0,"a b,a\n'}), ERROR, "m.csv"),
    Case("preds-corrupt-parquet", pf({"m.parquet": b"PAR1 this is not parquet"}), ERROR, "m.parquet"),
    Case("preds-json-not-list", pf({"m.json": '{"id": "a"}'}), ERROR, "m.json"),
    Case(
        "preds-dataset-unknown",
        lambda t: ["coverage", "--preds", str(good_folder(t)), "--dataset", "nope"],
        ERROR,
        "nope",
    ),
    # --- refdis options
    Case("refdis-no-panel", lambda t: ["refdis", "--preds", str(good_folder(t))], ERROR, "--panel"),
    Case(
        "refdis-panel-unknown-model",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,zz"],
        ERROR,
        "zz",
    ),
    Case(
        "refdis-panel-empty-item",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,,mb"],
        ERROR,
        "--panel",
    ),
    Case(
        "refdis-models-unknown",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--models", "qq"],
        ERROR,
        "qq",
    ),
    Case(
        "refdis-normalizer-unknown",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--normalizer", "bogus"],
        ERROR,
        "bogus",
    ),
    Case(
        "refdis-preset-unknown",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--preset", "bogus"],
        ERROR,
        "bogus",
    ),
    Case(
        "refdis-majority-above-1",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--majority", "2"],
        ERROR,
        "majority",
    ),
    Case(
        "refdis-resamples-zero",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--resamples", "0"],
        ERROR,
        "resamples",
    ),
    Case(
        "refdis-resamples-not-int",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--resamples", "many"],
        ERROR,
        "--resamples",
    ),
    Case(
        "refdis-seed-not-int",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--seed", "x"],
        ERROR,
        "--seed",
    ),
    Case(
        "refdis-corrected-refs-missing",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--corrected-refs", str(t / "fixed.jsonl")],
        ERROR,
        "fixed.jsonl",
    ),
    Case(
        "refdis-json-under-a-file",
        lambda t: [
            "refdis",
            "--preds",
            str(vox(t)),
            "--panel",
            "whisper-base.en,whisper-small.en,wav2vec2-base-960h",
            "--no-loo",
            "--resamples",
            "20",
            "--json",
            str(jsonl(t / "f.jsonl", [])) + "/r.json",
        ],
        ERROR,
        "f.jsonl",
    ),
    Case("refdis-missing-preds-option", lambda t: ["refdis", "--panel", "a,b,c"], ERROR, "--preds"),
    # --- switch-rate options
    Case(
        "switch-rate-family-unknown",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--families", "bogus"],
        ERROR,
        "bogus",
    ),
    Case(
        "switch-rate-min-per-arm-zero",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--min-per-arm", "0"],
        ERROR,
        "min-per-arm",
    ),
    Case(
        "switch-rate-models-unknown", lambda t: ["switch-rate", "--preds", str(vox(t)), "--models", "qq"], ERROR, "qq"
    ),
    Case("switch-rate-missing-preds", lambda t: ["switch-rate", "--preds", str(t / "nope")], ERROR, "{tmp}/nope"),
    Case(
        "switch-rate-csv-under-a-file",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--csv", str(jsonl(t / "f.jsonl", [])) + "/s.csv"],
        ERROR,
        "f.jsonl",
    ),
    # --- run (prediction-only specs: no model is loaded)
    Case("run-spec-missing", lambda t: ["run", str(t / "nope.toml")], ERROR, "nope.toml"),
    Case("run-spec-bad-toml", lambda t: ["run", str(spec(t, "title = \n[[corpus"))], ERROR, "audit.toml"),
    Case("run-spec-no-corpus", lambda t: ["run", str(spec(t, 'title = "t"\noutput = "o"\n'))], ERROR, "[[corpus]]"),
    Case(
        "run-spec-unknown-key",
        lambda t: ["run", str(spec(t, 'titel = "t"\n' + pred_spec(t).read_text()))],
        ERROR,
        "titel",
    ),
    Case("run-spec-predictions-missing", lambda t: ["run", str(pred_spec(t, preds=str(t / "gone")))], ERROR, "gone"),
    Case("run-spec-unknown-probe", lambda t: ["run", str(pred_spec(t, "[probes.bogus]\n"))], ERROR, "bogus"),
    Case(
        "run-spec-unknown-backend",
        lambda t: ["run", str(pred_spec(t, '[[model]]\nname = "x"\nspec = "nosuchbackend:y"\n'))],
        ERROR,
        "nosuchbackend",
    ),  # was a strict xfail (defect 17); every [[model]] spec is parsed when the spec loads
    Case(
        "run-spec-not-utf8", lambda t: ["run", str(_binary(t / "audit.toml", b'title = "\xff"\n'))], ERROR, "audit.toml"
    ),
    Case("run-spec-is-a-folder", lambda t: ["run", str(t)], ERROR, "{tmp}"),
    # --- merge
    Case(
        "merge-source-missing",
        lambda t: ["merge", "--into", str(t / "all.sqlite"), str(t / "gone.sqlite")],
        ERROR,
        "gone.sqlite",
    ),
    Case(
        "merge-source-foreign-db",
        lambda t: ["merge", "--into", str(t / "all.sqlite"), str(foreign_db(t / "app.db"))],
        ERROR,
        "app.db",
    ),
    Case(
        "merge-source-junk",
        lambda t: ["merge", "--into", str(t / "all.sqlite"), str(jsonl(t / "junk.sqlite", rows()))],
        ERROR,
        "junk.sqlite",
    ),
    Case(
        "merge-source-is-target",
        lambda t: ["merge", "--into", str(store(t / "a.sqlite")), str(t / "a.sqlite")],
        ERROR,
        "a.sqlite",
    ),
    Case(
        "merge-target-foreign-db",
        lambda t: ["merge", "--into", str(foreign_db(t / "app.db")), str(store(t / "a.sqlite"))],
        ERROR,
        "app.db",
    ),
    Case("merge-no-sources", lambda t: ["merge", "--into", str(t / "all.sqlite")], ERROR, "sources"),
    # --- align / transcribe: argument errors caught before any model loads
    Case("align-corpus-missing", lambda t: ["align", "--corpus", str(t / "nope.jsonl")], ERROR, "nope.jsonl"),
    Case(
        "align-aligner-unknown",
        lambda t: ["align", "--corpus", str(LIBRIVOX_MANIFEST), "--aligner", "bogus"],
        ERROR,
        "bogus",
    ),
    Case("align-limit-zero", lambda t: ["align", "--corpus", str(LIBRIVOX_MANIFEST), "--limit", "0"], ERROR, "--limit"),
    Case(
        "align-limit-not-int",
        lambda t: ["align", "--corpus", str(LIBRIVOX_MANIFEST), "--limit", "ten"],
        ERROR,
        "--limit",
    ),
    Case(
        "align-store-foreign-db",
        lambda t: ["align", "--corpus", str(LIBRIVOX_MANIFEST), "--store", str(foreign_db(t / "app.db"))],
        ERROR,
        "app.db",
    ),
    Case(
        "transcribe-backend-unknown",
        lambda t: ["transcribe", "--model", "nosuch:x", "--corpus", str(LIBRIVOX_MANIFEST), "--out", str(t / "o")],
        ERROR,
        "nosuch",
    ),
    Case(
        "transcribe-corpus-missing",
        lambda t: ["transcribe", "--model", "sphinx:en-us", "--corpus", str(t / "nope.jsonl"), "--out", str(t / "o")],
        ERROR,
        "nope.jsonl",
    ),
    Case(
        "transcribe-batch-size-zero",
        lambda t: [
            "transcribe",
            "--model",
            "sphinx:en-us",
            "--corpus",
            str(LIBRIVOX_MANIFEST),
            "--out",
            str(t / "o"),
            "--batch-size",
            "0",
        ],
        ERROR,
        "--batch-size",
    ),
    Case(
        "transcribe-openai-credentials-in-url",
        lambda t: [
            "transcribe",
            "--model",
            "openai:http://u:p@h#m",
            "--corpus",
            str(LIBRIVOX_MANIFEST),
            "--out",
            str(t / "o"),
        ],
        ERROR,
        "credentials",
    ),
    Case(
        "transcribe-openai-no-model",
        lambda t: [
            "transcribe",
            "--model",
            "openai:http://127.0.0.1:9",
            "--corpus",
            str(LIBRIVOX_MANIFEST),
            "--out",
            str(t / "o"),
        ],
        ERROR,
        "names no model",
    ),
    Case(
        "transcribe-normalizer-unknown",
        lambda t: [
            "transcribe",
            "--model",
            "sphinx:en-us",
            "--corpus",
            str(LIBRIVOX_MANIFEST),
            "--out",
            str(t / "o"),
            "--normalizer",
            "bogus",
        ],
        ERROR,
        "bogus",
    ),
    Case(
        "transcribe-store-foreign-db",
        lambda t: [
            "transcribe",
            "--model",
            "preds:" + str(good_folder(t)),
            "--corpus",
            str(LIBRIVOX_MANIFEST),
            "--out",
            str(t / "o"),
            "--store",
            str(foreign_db(t / "app.db")),
        ],
        ERROR,
        "app.db",
    ),
    Case(
        "transcribe-missing-out",
        lambda t: ["transcribe", "--model", "sphinx:en-us", "--corpus", str(LIBRIVOX_MANIFEST)],
        ERROR,
        "--out",
    ),
    # --- verbs and global usage
    Case("unknown-verb", lambda t: ["frobnicate"], ERROR, "frobnicate"),
    Case("unknown-option", lambda t: ["coverage", "--preds", str(vox(t)), "--frob"], ERROR, "--frob"),
    Case("markup-in-path", lambda t: ["coverage", "--preds", str(t / "gone[/x]")], ERROR, "gone[/x]"),
    Case("markup-model-name-ok", pf({"a[red]b.jsonl": GOOD_ROWS, "[x]y.jsonl": GOOD_ROWS}), OK),
    Case("dollar-model-name-ok", pf({"$x$.jsonl": GOOD_ROWS, "=1+2.jsonl": GOOD_ROWS}), OK),
    Case("markup-in-folder-path-ok", lambda t: ["coverage", "--preds", str(_markup_folder(t))], OK),
    Case(
        "markup-in-folder-path-refdis-ok",
        lambda t: ["refdis", "--preds", str(_markup_folder(t)), "--panel", "ma,mb,mc", "--no-loo", "--resamples", "20"],
        OK,
    ),
    # --- more prediction-file shapes
    Case(
        "preds-deeply-nested-json",
        pf(
            {
                "m.jsonl": '{"id": "a", "reference": "a", "hypothesis": "a", "x": '
                + "[" * 100_000
                + "]" * 100_000
                + "}\n"
            }
        ),
        ERROR,
        "m.jsonl",
    ),
    Case(
        "preds-lone-surrogate",
        pf({"m.jsonl": '{"id": "a", "reference": "a \\ud800 b", "hypothesis": "a"}\n'}),
        ERROR,
        "m.jsonl:1",
    ),
    Case(
        "preds-surrogate-pair-ok",
        pf({"m.jsonl": '{"id": "a", "reference": "a \\ud83d\\ude00 b", "hypothesis": "a"}\n'}),
        OK,
    ),
    Case(
        "preds-lone-surrogate-refdis",
        lambda t: [
            "refdis",
            "--preds",
            str(
                folder(
                    t,
                    {
                        f"{m}.jsonl": '{"id": "a", "reference": "a \\ud800 b", "hypothesis": "a b"}\n' + GOOD_ROWS
                        for m in ("ma", "mb", "mc")
                    },
                )
            ),
            "--panel",
            "ma,mb,mc",
            "--resamples",
            "20",
        ],
        ERROR,
        "ma.jsonl:1",
    ),
    Case("preds-deeply-nested-json-list", pf({"m.json": "[" * 100_000 + "]" * 100_000}), ERROR, "m.json"),
    Case("preds-cr-only-line-ends", pf({"m.jsonl": GOOD_ROWS.replace("\n", "\r")}), ERROR, "m.jsonl"),
    Case(
        "preds-nemo-style-ok", pf({"m.jsonl": '{"audio_filepath": "a.wav", "text": "a b", "pred_text": "a b"}\n'}), OK
    ),
    Case(
        "preds-id-with-path-traversal-ok",
        pf({"m.jsonl": '{"id": "../../etc/passwd", "reference": "a", "hypothesis": "a"}\n'}),
        OK,
    ),
    Case("preds-dangling-symlink", lambda t: ["coverage", "--preds", str(_symlinked(t))], ERROR, "gone.jsonl"),
    Case("preds-directory-named-jsonl", lambda t: ["coverage", "--preds", str(_dir_named(t))], ERROR, "sub.jsonl"),
    Case(
        "preds-dataset-on-flat-folder",
        lambda t: ["coverage", "--preds", str(good_folder(t)), "--dataset", "vox"],
        ERROR,
        "vox",
    ),
    # --- output paths
    Case(
        "refdis-json-is-a-directory",
        lambda t: [
            "refdis",
            "--preds",
            str(vox(t)),
            "--panel",
            "whisper-base.en,whisper-small.en,wav2vec2-base-960h",
            "--no-loo",
            "--resamples",
            "20",
            "--json",
            str(t),
        ],
        ERROR,
        "{tmp}",
    ),
    Case(
        "refdis-csv-is-a-directory",
        lambda t: [
            "refdis",
            "--preds",
            str(vox(t)),
            "--panel",
            "whisper-base.en,whisper-small.en,wav2vec2-base-960h",
            "--no-loo",
            "--resamples",
            "20",
            "--csv",
            str(t),
        ],
        ERROR,
        "{tmp}",
    ),
    Case(
        "switch-rate-json-is-a-directory",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--json", str(t)],
        ERROR,
        "{tmp}",
    ),
    Case("merge-into-a-directory", lambda t: ["merge", "--into", str(t), str(store(t / "a.sqlite"))], ERROR, "{tmp}"),
    Case(
        "merge-into-junk",
        lambda t: ["merge", "--into", str(jsonl(t / "junk.sqlite", rows())), str(store(t / "a.sqlite"))],
        ERROR,
        "junk.sqlite",
    ),
    # --- more refdis / switch-rate options
    Case(
        "refdis-min-panel-zero",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--min-panel", "0"],
        ERROR,
        "min-panel",
    ),
    Case(
        "refdis-normalize-workers-zero-ok",
        lambda t: [
            "refdis",
            "--preds",
            str(good_folder(t)),
            "--panel",
            "ma,mb,mc",
            "--no-loo",
            "--normalize-workers",
            "0",
        ],
        OK,
    ),  # 0 = one per core
    Case(
        "refdis-normalize-workers-negative",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--normalize-workers", "-2"],
        ERROR,
        "workers",
    ),
    Case(
        "refdis-majority-negative",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--majority", "-0.5"],
        ERROR,
        "majority",
    ),
    Case(
        "refdis-majority-not-number",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--panel", "ma,mb,mc", "--majority", "most"],
        ERROR,
        "--majority",
    ),
    Case(
        "switch-rate-families-empty-item",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--families", "a,,b"],
        ERROR,
        "--families",
    ),
    Case(
        "switch-rate-min-per-arm-not-int",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--min-per-arm", "1.5"],
        ERROR,
        "--min-per-arm",
    ),
    # --- more run specs
    Case(
        "run-spec-resamples-not-int",
        lambda t: ["run", str(_spec_with(t, "resamples = 20", 'resamples = "many"'))],
        ERROR,
        "resamples",
    ),  # was a strict xfail (defect 13); the options records check spec values now
    Case(
        "run-spec-seed-not-int",
        lambda t: ["run", str(spec(t, 'seed = "x"\n' + pred_spec(t).read_text()))],
        ERROR,
        "seed",
    ),
    Case(
        "run-spec-normalizer-unknown",
        lambda t: ["run", str(spec(t, 'normalizer = "bogus"\n' + pred_spec(t).read_text()))],
        ERROR,
        "bogus",
    ),
    Case(
        "run-spec-panel-unknown-model",
        lambda t: ["run", str(_spec_with(t, '"wav2vec2-base-960h"]', '"zz"]'))],
        ERROR,
        "zz",
    ),
    Case(
        "run-spec-duplicate-corpus",
        lambda t: [
            "run",
            str(
                spec(
                    t,
                    pred_spec(t)
                    .read_text()
                    .replace(
                        "[probes.refdis]",
                        '[[corpus]]\nname = "vox"\npredictions = "' + str(t / "vox") + '"\n[probes.refdis]',
                    ),
                )
            ),
        ],
        ERROR,
        "vox",
    ),
    Case(
        "run-spec-corpus-limit-zero",
        lambda t: ["run", str(spec(t, pred_spec(t).read_text().replace('name = "vox"', 'name = "vox"\nlimit = 0')))],
        ERROR,
        "limit",
    ),
    # --- help and listing: exit 0
    *[
        Case(f"help-{verb}", _help(verb), OK)
        for verb in ("refdis", "coverage", "switch-rate", "transcribe", "align", "run", "merge", "models")
    ],
    Case("models-ok", lambda t: ["models"], OK),
]


def _symlinked(tmp: Path) -> Path:
    d = good_folder(tmp)
    (d / "gone.jsonl").symlink_to(tmp / "nowhere.jsonl")
    return d


def _dir_named(tmp: Path) -> Path:
    d = good_folder(tmp)
    (d / "sub.jsonl").mkdir()
    return d


def _spec_with(tmp: Path, old: str, new: str) -> Path:
    p = pred_spec(tmp)
    text = p.read_text()
    assert old in text, old
    p.write_text(text.replace(old, new))
    return p


def _markup_folder(tmp: Path) -> Path:
    """A prediction folder whose path reads as rich markup: ``.../a[/x]b``."""
    d = tmp / "a[" / "x]b"
    for m in ("ma", "mb", "mc"):
        jsonl(d / f"{m}.jsonl", rows())
    return d


# ---------------------------------------------------------------- issue 12, defects 7, 9, 11, 13, 15, 17
LIBRI = str(LIBRIVOX_MANIFEST)
LIBRI_IDS = ("0870.flac", "0880.flac", "0890.flac", "0920.flac", "0930.flac")
PANEL3 = "whisper-base.en,whisper-small.en,wav2vec2-base-960h"


def a_file(tmp: Path, name: str = "f.txt") -> Path:
    """A regular file, to stand where a folder is expected (or above an output path)."""
    p = tmp / name
    p.write_text("x\n", encoding="utf-8")
    return p


def hyps(tmp: Path, ids: tuple[str, ...] = LIBRI_IDS, name: str = "h.jsonl", hyp: str = "he was not") -> Path:
    """A prediction file answering ``ids`` (for the ``preds:`` backend, which needs no audio)."""
    return jsonl(tmp / name, [{"id": i, "reference": "x", "hypothesis": hyp} for i in ids])


def manifest(tmp: Path, body: str | bytes, name: str = "man.jsonl") -> Path:
    p = tmp / name
    p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return p


def _man_rows(n: int = 3, ref: str = "he was not") -> str:
    return "".join(json.dumps({"audio_filepath": f"a{i}.wav", "text": ref, "duration": 1.0}) + "\n" for i in range(n))


def _align_manifest(body: str | bytes) -> Build:
    """``align`` on a manifest holding ``body``."""
    return lambda t: ["align", "-c", str(manifest(t, body))]


def transcribe_preds(preds: Callable[[Path], Path], corpus: Callable[[Path], object] = lambda t: LIBRI, *more: str):
    """``transcribe`` with the ``preds:`` backend (no model weights, no audio decoding)."""
    return lambda t: ["transcribe", "-m", f"preds:{preds(t)}", "-c", str(corpus(t)), "-o", str(t / "o"), *more]


def _refdis(preds: Callable[[Path], Path], *more: str, panel: str = "ma,mb,mc") -> Build:
    return lambda t: ["refdis", "--preds", str(preds(t)), "--panel", panel, "--no-loo", "--resamples", "20", *more]


def _vox_refdis(*more: str) -> Build:
    return lambda t: ["refdis", "--preds", str(vox(t)), "--panel", PANEL3, "--no-loo", "--resamples", "20", *more]


def _three(tmp: Path, per_model: dict[str, list[dict]]) -> Path:
    d = folder(tmp, {})
    for m, items in per_model.items():
        jsonl(d / f"{m}.jsonl", items)
    return d


def _with_missing(tmp: Path) -> Path:
    """ma, mb, mc answer every clip; md answers none; me answers 2 of 6."""
    full = [
        {"id": f"c{i}", "reference": f"the cat sat on a mat {i}", "hypothesis": f"the cat sat on a mat {i}"}
        for i in range(6)
    ]
    none = [{**r, "hypothesis": None} for r in full]
    return _three(tmp, {"ma": full, "mb": full, "mc": full, "md": none, "me": full[:2]})


def _empty_refs(tmp: Path) -> Path:
    rows_ = [{"id": "a", "reference": "", "hypothesis": "x"}, {"id": "b", "reference": "", "hypothesis": ""}]
    return _three(tmp, dict.fromkeys(("ma", "mb", "mc"), rows_))


def _isolated(tmp: Path) -> Path:
    other = [{"id": f"z{i}", "reference": f"a b {i}", "hypothesis": f"a b {i}"} for i in range(4)]
    return _three(tmp, {"ma": rows(), "mb": rows(), "mc": other})


def _run_into(prepare: Callable[[Path], Path], *more: str) -> Build:
    """``run`` of the prediction spec with ``--out`` the folder ``prepare`` returns."""
    return lambda t: ["run", str(pred_spec(t)), "--no-progress", "--out", str(prepare(t)), *more]


def _foreign_nonempty(tmp: Path) -> Path:
    d = tmp / "mine"
    d.mkdir()
    (d / "thesis.tex").write_text("my work\n", encoding="utf-8")
    return d


def _marked(tmp: Path) -> Path:
    from asr_audit.outputs import mark_output_dir

    d = mark_output_dir(tmp / "prev")
    (d / "report.html").write_text("old\n", encoding="utf-8")
    return d


def _empty_dir(tmp: Path) -> Path:
    d = tmp / "empty"
    d.mkdir()
    return d


def _model_spec(tmp: Path, model: str) -> Path:
    """The prediction spec with one extra ``[[model]]`` table (which no corpus transcribes)."""
    return pred_spec(tmp, "[[model]]\n" + model)


def _corrected(tmp: Path, ids: tuple[str, ...]) -> Path:
    return jsonl(tmp / "fixed.jsonl", [{"id": i, "reference": "the cat sat on a mat"} for i in ids])


def _recursion_toml(tmp: Path) -> Path:
    return spec(tmp, "x = " + "[" * 100_000 + "]" * 100_000 + "\n")


MANIFEST_BAD: dict[str, str | bytes] = {
    "missing-text": '{"audio_filepath": "a.wav"}\n',
    "text-not-string": '{"audio_filepath": "a.wav", "text": 5}\n',
    "missing-audio": '{"text": "a"}\n',
    "bad-duration": '{"audio_filepath": "a.wav", "text": "a", "duration": -1}\n',
    "duplicate-id": _man_rows(1) + _man_rows(1),
    "not-object": "[1, 2]\n",
    "empty": "",
    "bad-json": '{"audio_filepath": "a.wav", "text": \n',
    "non-utf8": b'{"audio_filepath": "a.wav", "text": "caf\xe9"}\n',
    "lone-surrogate-text": '{"audio_filepath": "a.wav", "text": "a \\ud800 b"}\n',
    "lone-surrogate-id": '{"audio_filepath": "a.wav", "id": "x\\udc00", "text": "a"}\n',
    "deeply-nested": '{"audio_filepath": "a.wav", "text": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
    "cr-only": _man_rows(3).replace("\n", "\r"),
    "speaker-is-list": '{"audio_filepath": "a.wav", "text": "a", "speaker": [1]}\n',
}

CASES += [
    # --- defect 13: outputs checked before the work (no model runs, no traceback)
    Case("align-out-is-a-directory", lambda t: ["align", "-c", LIBRI, "-o", str(t)], ERROR, "{tmp}"),
    Case("align-out-under-a-file", lambda t: ["align", "-c", LIBRI, "-o", str(a_file(t)) + "/t.jsonl"], ERROR, "f.txt"),
    Case(
        "masked-json-is-a-directory",
        lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--json", str(t)],
        ERROR,
        "--json",
    ),
    Case(
        "masked-json-under-a-file",
        lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--json", str(a_file(t)) + "/m.json"],
        ERROR,
        "f.txt",
    ),
    Case(
        "masked-recipes-out-is-a-directory",
        lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--recipes-out", str(t)],
        ERROR,
        "--recipes-out",
    ),
    Case(
        "lift-json-is-a-directory",
        lambda t: ["lift", "-m", "whisper-tiny.en-pt", "-c", LIBRI, "--spans", "full", "--json", str(t)],
        ERROR,
        "--json",
    ),
    Case(
        "continue-json-is-a-directory",
        lambda t: ["continue", "-m", "whisper-tiny.en-pt", "-c", LIBRI, "--json", str(t)],
        ERROR,
        "--json",
    ),
    Case("transcribe-preds-backend-ok", transcribe_preds(hyps), OK),  # the good twin of the next cases
    Case(
        "transcribe-out-existing-file",
        lambda t: ["transcribe", "-m", f"preds:{hyps(t)}", "-c", LIBRI, "-o", str(a_file(t))],
        ERROR,
        "f.txt",
    ),
    Case(
        "transcribe-out-under-a-file",
        lambda t: ["transcribe", "-m", f"preds:{hyps(t)}", "-c", LIBRI, "-o", str(a_file(t)) + "/o"],
        ERROR,
        "f.txt",
    ),
    Case(
        "transcribe-out-root", lambda t: ["transcribe", "-m", f"preds:{hyps(t)}", "-c", LIBRI, "-o", "/"], ERROR, "root"
    ),
    Case("calib-build-out-is-a-file", lambda t: ["calib", "build", "-o", str(a_file(t))], ERROR, "f.txt"),
    Case("calib-build-out-under-a-file", lambda t: ["calib", "build", "-o", str(a_file(t)) + "/c"], ERROR, "f.txt"),
    Case(
        "calib-score-json-is-a-directory",
        lambda t: [
            "calib",
            "score",
            "--corpus",
            str(t),
            "--preds",
            str(good_folder(t)),
            "--panel",
            "ma,mb",
            "--json",
            str(t),
        ],
        ERROR,
        "--json",
    ),
    Case("refdis-csv-under-a-file", lambda t: _vox_refdis("--csv", str(a_file(t)) + "/r.csv")(t), ERROR, "f.txt"),
    Case(
        "switch-rate-csv-is-a-directory",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--csv", str(t)],
        ERROR,
        "{tmp}",
    ),
    Case(
        "switch-rate-json-under-a-file",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--json", str(a_file(t)) + "/s.json"],
        ERROR,
        "f.txt",
    ),
    Case(
        "refdis-json-under-a-file-before-work", _refdis(good_folder, "--json", "/dev/null/r.json"), ERROR, "/dev/null"
    ),
    # --- defect 11: the run's output folder
    Case("run-out-root", _run_into(lambda t: Path("/")), ERROR, "root"),
    Case("run-out-home", _run_into(lambda t: Path.home()), ERROR, "home"),
    Case("run-out-home-force-still-refused", _run_into(lambda t: Path.home(), "--force"), ERROR, "home"),
    Case("run-out-foreign-nonempty", _run_into(_foreign_nonempty), ERROR, "not asr-audit output"),
    Case("run-out-foreign-nonempty-force-ok", _run_into(_foreign_nonempty, "--force"), OK),
    Case("run-out-previous-output-ok", _run_into(_marked), OK),
    Case("run-out-empty-folder-ok", _run_into(_empty_dir), OK),
    Case("run-out-is-a-file", _run_into(a_file), ERROR, "f.txt"),
    Case("run-out-under-a-file", _run_into(lambda t: a_file(t) / "o"), ERROR, "f.txt"),
    Case(
        "run-spec-output-root",
        lambda t: ["run", str(_spec_with(t, f'output = "{t / "out"}"', 'output = "/"')), "--no-progress"],
        ERROR,
        "audit.toml",
    ),
    Case(
        "run-spec-output-foreign-nonempty",
        lambda t: [
            "run",
            str(_spec_with(t, f'output = "{t / "out"}"', f'output = "{_foreign_nonempty(t)}"')),
            "--no-progress",
        ],
        ERROR,
        "--force",
    ),
    Case("run-twice-into-its-output-ok", lambda t: _run_twice(t), OK),
    # --- defect 9: total failure is an error; partial failure is not
    Case("transcribe-every-clip-fails", transcribe_preds(lambda t: hyps(t, ("zz",))), ERROR, "every one of the 5"),
    Case(
        "transcribe-one-model-gets-nothing",
        lambda t: [
            "transcribe",
            "-m",
            f"preds:{hyps(t)},preds:{hyps(t, ('zz',), 'none.jsonl')}",
            "-c",
            LIBRI,
            "-o",
            str(t / "o"),
        ],
        ERROR,
        "none.jsonl",
    ),
    Case("transcribe-some-clips-fail-ok", transcribe_preds(lambda t: hyps(t, LIBRI_IDS[:3])), OK, "60.0%"),
    Case("transcribe-coverage-shown-ok", transcribe_preds(hyps), OK, "100.0%"),
    Case(
        "transcribe-many-failures",
        transcribe_preds(lambda t: hyps(t, ("zz",)), lambda t: manifest(t, _man_rows(300))),
        ERROR,
        "every one of the 300",
    ),
    Case(
        "run-probe-config-error",
        lambda t: ["run", str(_spec_with(t, "resamples = 20", "resamples = 20\nmin_panel = 5")), "--no-progress"],
        ERROR,
        "min_panel",
    ),
    # --- defect 7: missing output, empty references, coverage
    Case("refdis-model-without-output-ok", _refdis(_with_missing), OK, "0.0%"),
    Case("refdis-partial-coverage-ok", _refdis(_with_missing), OK, "33.3%"),
    Case("refdis-all-empty-references-ok", _refdis(_empty_refs), OK, "—"),
    Case("refdis-coverage-column-ok", _vox_refdis(), OK, "coverage"),
    # --- defect 13: manifests (loaded before any model or aligner), TOML
    *[
        Case(f"manifest-{k}-transcribe", transcribe_preds(hyps, partial(manifest, body=body)), ERROR, "man.jsonl")
        for k, body in MANIFEST_BAD.items()
    ],
    *[
        Case(f"manifest-{k}-align", _align_manifest(body), ERROR, "man.jsonl")
        for k, body in MANIFEST_BAD.items()
        if k in ("missing-text", "lone-surrogate-text", "deeply-nested", "cr-only", "duplicate-id", "non-utf8")
    ],
    Case(
        "manifest-cr-only-named",
        lambda t: ["align", "-c", str(manifest(t, _man_rows(3).replace("\n", "\r")))],
        ERROR,
        "carriage return",
    ),
    Case("preds-cr-only-named", pf({"m.jsonl": GOOD_ROWS.replace("\n", "\r")}), ERROR, "carriage return"),
    Case(
        "transcribe-surrogate-reference-before-model",
        transcribe_preds(hyps, lambda t: manifest(t, '{"audio_filepath": "0870.flac", "text": "a \\ud800"}\n')),
        ERROR,
        "man.jsonl:1",
    ),
    Case("run-spec-deeply-nested-toml", lambda t: ["run", str(_recursion_toml(t))], ERROR, "audit.toml"),
    Case(
        "run-spec-is-binary", lambda t: ["run", str(_binary(t / "audit.toml", bytes(range(256))))], ERROR, "audit.toml"
    ),
    # --- defect 17: decode options, model specs, option fixes, corrected references, panel overlap
    Case(
        "run-spec-model-language-int",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { language = 5 }\n'))],
        ERROR,
        "language",
    ),
    Case(
        "run-spec-model-beam-size-str",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { beam_size = "4" }\n'))],
        ERROR,
        "beam_size",
    ),
    Case(
        "run-spec-model-beam-size-bool",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { beam_size = true }\n'))],
        ERROR,
        "beam_size",
    ),
    Case(
        "run-spec-model-beam-size-zero",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { beam_size = 0 }\n'))],
        ERROR,
        "beam_size",
    ),
    Case(
        "run-spec-model-max-new-tokens-float",
        lambda t: [
            "run",
            str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { max_new_tokens = 1.5 }\n')),
        ],
        ERROR,
        "max_new_tokens",
    ),
    Case(
        "run-spec-model-task-int",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { task = 1 }\n'))],
        ERROR,
        "task",
    ),
    Case(
        "run-spec-model-task-unknown",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { task = "summarize" }\n'))],
        ERROR,
        "summarize",
    ),
    Case(
        "run-spec-model-compute-type-int",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { compute_type = 16 }\n'))],
        ERROR,
        "compute_type",
    ),
    Case(
        "run-spec-model-option-unknown",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { temprature = 0 }\n'))],
        ERROR,
        "temprature",
    ),
    Case(
        "run-spec-model-options-not-table",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = 5\n'))],
        ERROR,
        "options",
    ),
    Case(
        "run-spec-model-spec-empty-arg",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:"\n'))],
        ERROR,
        "sphinx:",
    ),
    Case("run-spec-model-spec-missing", lambda t: ["run", str(_model_spec(t, 'name = "x"\n'))], ERROR, "spec"),
    Case(
        "run-spec-model-name-missing", lambda t: ["run", str(_model_spec(t, 'spec = "sphinx:en-us"\n'))], ERROR, "name"
    ),
    Case(
        "run-spec-model-batch-size-zero",
        lambda t: ["run", str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\nbatch_size = 0\n'))],
        ERROR,
        "batch_size",
    ),
    Case(
        "run-spec-model-valid-unused-ok",
        lambda t: [
            "run",
            str(_model_spec(t, 'name = "x"\nspec = "sphinx:en-us"\noptions = { language = "en", beam_size = 2 }\n')),
            "--no-progress",
        ],
        OK,
    ),
    Case(
        "run-spec-model-names-repeat",
        lambda t: [
            "run",
            str(
                pred_spec(
                    t, '[[model]]\nname = "x"\nspec = "sphinx:en-us"\n[[model]]\nname = "x"\nspec = "sphinx:en-us"\n'
                )
            ),
        ],
        ERROR,
        "names repeat",
    ),
    Case(
        "transcribe-model-spec-empty-arg",
        lambda t: ["transcribe", "-m", "sphinx:", "-c", LIBRI, "-o", str(t / "o")],
        ERROR,
        "sphinx:",
    ),
    Case(
        "transcribe-model-twice",
        lambda t: ["transcribe", "-m", "sphinx:en-us,sphinx:en-us", "-c", LIBRI, "-o", str(t / "o")],
        ERROR,
        "twice",
    ),
    Case(
        "transcribe-model-empty-item",
        lambda t: ["transcribe", "-m", "sphinx:en-us,,x", "-c", LIBRI, "-o", str(t / "o")],
        ERROR,
        "empty item",
    ),
    Case(
        "transcribe-model-unknown-named-fix",
        lambda t: ["transcribe", "-m", "whisper-huge-v9", "-c", LIBRI, "-o", str(t / "o")],
        ERROR,
        "whisper-huge-v9",
    ),
    Case("masked-model-unknown", lambda t: ["masked", "-m", "nosuch:x", "-c", LIBRI], ERROR, "nosuch"),
    Case(
        "masked-kind-unknown",
        lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--kind", "colour"],
        ERROR,
        "colour",
    ),
    Case(
        "masked-method-unknown",
        lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--method", "erase"],
        ERROR,
        "erase",
    ),
    Case(
        "masked-recipes-in-and-out",
        lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--recipes-in", "a", "--recipes-out", "b"],
        ERROR,
        "--recipes-in",
    ),
    Case("masked-pad-negative", lambda t: ["masked", "-m", "sphinx:en-us", "-c", LIBRI, "--pad", "-1"], ERROR, "--pad"),
    Case(
        "lift-spans-unknown-before-model",
        lambda t: ["lift", "-m", "hf:/no/such/model", "-c", LIBRI, "--spans", "bogus"],
        ERROR,
        "--spans",
    ),
    Case(
        "lift-spans-refdis-without-file",
        lambda t: ["lift", "-m", "whisper-tiny.en-pt", "-c", LIBRI, "--spans", "refdis"],
        ERROR,
        "--refdis",
    ),
    Case(
        "lift-refdis-file-missing",
        lambda t: ["lift", "-m", "whisper-tiny.en-pt", "-c", LIBRI, "--spans", "refdis", "--refdis", str(t / "r.json")],
        ERROR,
        "r.json",
    ),
    Case(
        "continue-hide-words-zero",
        lambda t: ["continue", "-m", "whisper-tiny.en-pt", "-c", LIBRI, "--hide-words", "0"],
        ERROR,
        "--hide-words",
    ),
    Case(
        "continue-aligner-unknown",
        lambda t: ["continue", "-m", "whisper-tiny.en-pt", "-c", LIBRI, "--aligner", "bogus"],
        ERROR,
        "bogus",
    ),
    Case(
        "refdis-corrected-refs-no-matching-id",
        lambda t: ["refdis", "--preds", str(good_folder(t)), "--corrected-refs", str(_corrected(t, ("x1", "x2")))],
        ERROR,
        "fixed.jsonl",
    ),
    Case(
        "refdis-corrected-refs-ok",
        lambda t: [
            "refdis",
            "--preds",
            str(good_folder(t)),
            "--corrected-refs",
            str(_corrected(t, ("c0", "c1"))),
            "--resamples",
            "20",
        ],
        OK,
    ),
    Case(
        "refdis-corrected-refs-cr-only",
        lambda t: [
            "refdis",
            "--preds",
            str(good_folder(t)),
            "--corrected-refs",
            str(manifest(t, '{"id": "c0", "reference": "a"}\r{"id": "c1", "reference": "b"}\r', "fixed.jsonl")),
        ],
        ERROR,
        "carriage return",
    ),
    Case(
        "refdis-corrected-refs-no-reference-column",
        lambda t: [
            "refdis",
            "--preds",
            str(good_folder(t)),
            "--corrected-refs",
            str(jsonl(t / "fixed.jsonl", [{"id": "c0", "txt": "a"}])),
        ],
        ERROR,
        "fixed.jsonl",
    ),
    Case(
        "refdis-files-share-no-clip-id-refused",
        _refdis(_isolated),
        ERROR,
        "mc.jsonl: its clip ids barely match the other files' (0 of 4 shared",
    ),
    Case(
        "refdis-panel-member-shares-no-clip-warned-ok",
        _refdis(_isolated, "--min-id-overlap", "0"),
        OK,
        "warning: panel model mc shares no answered clip id",
    ),
    Case(
        "run-panel-member-shares-no-clip-warned-ok",
        lambda t: ["run", str(_isolated_spec(t)), "--no-progress"],
        OK,
        "warning: corpus 'vox': panel model mc shares no answered clip id",
    ),
    Case("refdis-language-bogus-ok", _refdis(good_folder, "--language", "xx"), OK),
    Case("refdis-min-ref-match-above-1", _refdis(good_folder, "--min-ref-match", "2"), ERROR, "min-ref-match"),
    Case("refdis-min-run-len-zero", _refdis(good_folder, "--min-run-len", "0"), ERROR, "min-run-len"),
    Case(
        "switch-rate-denominator-unknown",
        lambda t: ["switch-rate", "--preds", str(vox(t)), "--denominator", "bogus"],
        ERROR,
        "bogus",
    ),
    Case("run-shard-not-i-of-n", lambda t: ["run", str(pred_spec(t)), "--shard", "x"], ERROR, "--shard"),
    Case("run-shard-index-too-big", lambda t: ["run", str(pred_spec(t)), "--shard", "4/4"], ERROR, "--shard"),
    Case("run-shard-zero-count", lambda t: ["run", str(pred_spec(t)), "--shard", "0/0"], ERROR, "--shard"),
    Case(
        "transcribe-store-is-a-directory",
        lambda t: ["transcribe", "-m", f"preds:{hyps(t)}", "-c", LIBRI, "-o", str(t / "o"), "--store", str(t)],
        ERROR,
        "{tmp}",
    ),
    Case("align-store-is-a-directory", lambda t: ["align", "-c", LIBRI, "--store", str(t)], ERROR, "{tmp}"),
    Case(
        "merge-into-under-a-file",
        lambda t: ["merge", "--into", str(a_file(t)) + "/all.sqlite", str(store(t / "a.sqlite"))],
        ERROR,
        "f.txt",
    ),
    Case(
        "transcribe-preds-file-missing",
        lambda t: ["transcribe", "-m", f"preds:{t / 'nope.jsonl'}", "-c", LIBRI, "-o", str(t / "o")],
        ERROR,
        "nope.jsonl",
    ),
    Case(
        "transcribe-limit-zero",
        lambda t: ["transcribe", "-m", "sphinx:en-us", "-c", LIBRI, "-o", str(t / "o"), "--limit", "0"],
        ERROR,
        "--limit",
    ),
    Case(
        "transcribe-corpus-is-a-folder-without-clips",
        lambda t: ["transcribe", "-m", "sphinx:en-us", "-c", str(_empty_dir(t)), "-o", str(t / "o")],
        ERROR,
        "empty",
    ),
    Case("coverage-json-list-ok", pf({"m.json": json.dumps(rows())}), OK),
    Case(
        "coverage-missing-hypotheses-ok", pf({"m.jsonl": '{"id": "a", "reference": "a b", "hypothesis": null}\n'}), OK
    ),
]


def _isolated_spec(tmp: Path) -> Path:
    p = pred_spec(tmp, preds=str(_isolated(tmp)))
    p.write_text(
        p.read_text()
        .replace('["whisper-base.en", "whisper-small.en", "wav2vec2-base-960h"]', '["ma", "mb", "mc"]')
        .replace('panel = ["ma"', 'min_id_overlap = 0  # mc shares no clip id: go on, warned\npanel = ["ma"')
    )
    return p


def _run_twice(tmp: Path) -> list[str]:
    """The first run writes the output folder (with its marker); the case reruns into it."""
    from asr_audit.cli import main

    argv = ["run", str(pred_spec(tmp)), "--no-progress"]
    assert main(argv) == 0
    return argv
