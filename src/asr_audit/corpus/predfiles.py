"""Load per-model prediction files (JSONL/NDJSON, JSON list, CSV, Parquet) from a file or folder.

Accepted column names (first present wins; then the same names in any case; then, for the
hypothesis, a name starting ``transcription_``, ``prediction_text_`` or ``pred_text_``, such as
``transcription_en-US``):

* clip id: ``audio_filepath``, ``id``, ``key``, ``__key__``, ``utt_id``, ``clip_id``, ``utterance_id``,
  ``segment_id``, ``audio_id``, ``path``, ``paths``, ``audio_path``, ``file``, ``files``, ``filename``,
  ``file_name``
* reference: ``text``, ``reference``, ``ref``, ``ground_truth``, ``target``, ``references``,
  ``sentence``, ``actual``, ``expected``, ``normalized_text``, ``raw_text``
* hypothesis: ``pred_text``, ``prediction``, ``hypothesis``, ``hyp``, ``transcription``, ``pred``,
  ``prediction_text``, ``predicted_text``, ``predicted``, ``predictions``, ``hypothesis_text``
* optional: ``duration``, ``time``, ``language``, ``speaker``

Other names are mapped with :class:`~asr_audit.corpus.reading.ReadOptions` (``--id-col``,
``--ref-col``, ``--hyp-col``), which also takes ids from paths (``--id-from``), reconciles
references (``--references``) and repairs mojibake (``--fix-encoding``); every repair is
counted in :attr:`PredictionSet.repairs`.

The model name comes from the file name: the Open ASR Leaderboard's
``MODEL_<org-model>_DATASET_<dataset>_<split>.jsonl`` naming, its two bucket layouts
(``<dir>/<model>/MODEL_...jsonl`` and ``<dir>/<dataset>/<model>.jsonl``) or plainly
``<model>.jsonl``. A hypothesis that is present but empty (``""``) is kept distinct from a
missing one (``null``, an absent field, or a clip absent from the file).

Every malformed input raises :class:`~asr_audit.errors.InputFileError` naming file, line and fix.
"""

from __future__ import annotations

import csv
import gc
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.corpus.jsonl import iter_jsonl
from asr_audit.corpus.reading import (
    COLUMN_ROLES,
    ReadOptions,
    Repair,
    Repairs,
    change,
    check_id_overlap,
    encoding_fixer,
    from_model_missing,
    header_names,
    mojibake_note,
    pick_column,
    reference_key,
    tail,
)
from asr_audit.corpus.records import PredictionFile, PredictionRow
from asr_audit.errors import ConfigError, InputFileError, require

ID_COLUMNS = (
    "audio_filepath",
    "id",
    "key",
    "__key__",
    "utt_id",
    "clip_id",
    "utterance_id",
    "segment_id",
    "audio_id",
    "path",
    "paths",
    "audio_path",
    "file",
    "files",
    "filename",
    "file_name",
)
REF_COLUMNS = (
    "text",
    "reference",
    "ref",
    "ground_truth",
    "target",
    "references",
    "sentence",
    "actual",
    "expected",
    "normalized_text",
    "raw_text",
)
HYP_COLUMNS = (
    "pred_text",
    "prediction",
    "hypothesis",
    "hyp",
    "transcription",
    "pred",
    "prediction_text",
    "predicted_text",
    "predicted",
    "predictions",
    "hypothesis_text",
)
HYP_PREFIXES = ("transcription_", "prediction_text_", "pred_text_")  # language-tagged: transcription_en-US
MAX_TEXT_CHARS = 1_000_000
"""The longest reference or hypothesis a row may carry: about 15 hours of speech. Longer text is
not a transcript (a whole file pasted into one cell) and would cost gigabytes to normalize and
align, so it is refused with the file and row named."""
DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
# files that may sit beside prediction files and are not data
IGNORED_SUFFIXES = (".md", ".txt", ".rst", ".html", ".pdf", ".png", ".svg", ".log", ".yaml", ".yml", ".toml")
IGNORED_STEMS = ("notice", "license", "licence", "readme", "changelog")

_OAL_NAME = re.compile(r"^MODEL_(?P<model>.+?)_DATASET_(?P<dataset>.+)_(?P<split>[^_]+)$")


@dataclass(frozen=True, slots=True)
class FileName:
    """What a prediction file's path says about its contents."""

    model: str
    dataset: str | None = None
    split: str | None = None


def parse_file_name(path: Path, root: Path | None = None) -> FileName:
    """Model / dataset / split from a prediction file's path.

    >>> parse_file_name(Path("MODEL_openai-whisper-tiny.en_DATASET_esb_voxpopuli_test.jsonl"))
    FileName(model='openai-whisper-tiny.en', dataset='esb_voxpopuli', split='test')
    >>> parse_file_name(Path("preds/voxpopuli/whisper-base.en.jsonl"), Path("preds"))
    FileName(model='whisper-base.en', dataset='voxpopuli', split=None)
    >>> parse_file_name(Path("whisper-tiny.en.jsonl"))
    FileName(model='whisper-tiny.en', dataset=None, split=None)
    """
    stem = path.name
    for suffix in DATA_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    m = _OAL_NAME.match(stem)
    if m:
        return FileName(m["model"], m["dataset"], m["split"])
    dataset = None
    if root is not None and path.parent != root:
        dataset = path.parent.name  # <dir>/<dataset>/<model>.jsonl
    return FileName(stem, dataset, None)


def _first(columns: Sequence[str], names: Sequence[str]) -> str | None:
    present = set(columns)
    return next((n for n in names if n in present), None)


_DECODER = json.JSONDecoder()  # json.loads' defaults
_JSON_WS = " \t\n\r"  # the whitespace json.loads skips around a value


def _scan_jsonl(path: Path, failed: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """What :func:`iter_jsonl` yields for a well-formed file, read faster, one line at a time.

    Per line the decoder's C scanner, as ``json.loads`` does less its Python wrapper. Lines are
    the binary file's lines as in :func:`iter_jsonl` (a BOM is allowed on the first), blank lines
    are skipped by the same test, and a value must span its line (``json.loads``' "extra data"
    rule). At the first line it cannot read (bad UTF-8, bad JSON, a non-object line) it appends
    that line's number to ``failed`` and stops. Only one line's text is held at a time: a large
    file is never decoded whole.
    """
    scan = _DECODER.scan_once  # type: ignore[attr-defined]  # set in JSONDecoder.__init__; typeshed omits it
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                failed.append(lineno)
                return
            if not line.strip():  # iter_jsonl's blank-line test
                continue
            value = line.strip(_JSON_WS)
            try:
                obj, end = scan(value, 0)
            except (StopIteration, ValueError, RecursionError):
                failed.append(lineno)
                return
            if end != len(value) or type(obj) is not dict:
                failed.append(lineno)
                return
            yield lineno, obj


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl`'s rows, streamed by :func:`_scan_jsonl` up to the first line it cannot
    read; from that line on they come from :func:`iter_jsonl`, which raises the one-line error
    naming the line (the rows before it were already yielded, as its own lazy reading would)."""
    failed: list[int] = []
    yield from _scan_jsonl(path, failed)
    if failed:
        for lineno, obj in iter_jsonl(path, "prediction file"):
            if lineno >= failed[0]:
                yield lineno, obj


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(path, f"not valid UTF-8 (byte {exc.start})", "re-encode the file as UTF-8", line) from None


def _iter_json_list(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            path,
            f"bad JSON at column {exc.colno}: {exc.msg}",
            "write a JSON list of objects, or JSONL with one object per line",
            exc.lineno,
        ) from None
    except RecursionError:
        raise InputFileError(path, "JSON nested too deeply to read", "write a flat JSON list of row objects") from None
    if isinstance(data, dict):  # {"rows": [...]} or column-oriented data are not guessed at
        raise InputFileError(
            path,
            "top-level JSON value is an object, expected a list of row objects",
            "write a JSON list of objects, or JSONL with one object per line",
        )
    if not isinstance(data, list):
        raise InputFileError(
            path, f"top-level JSON value is a {type(data).__name__}, expected a list", "write a JSON list of objects"
        )
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise InputFileError(
                path,
                f"list item {i} is a {type(obj).__name__}, expected an object",
                "make every list item a JSON object",
            )
        yield i, obj


def _iter_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    text = _read_text(path)
    reader = csv.DictReader(text.splitlines(keepends=True), strict=True)  # an unclosed quote is an error
    try:
        for row in reader:
            if None in row:
                raise InputFileError(
                    path, "row has more fields than the header", "quote fields that contain commas", reader.line_num
                )
            yield reader.line_num, dict(row)
    except csv.Error as exc:
        raise InputFileError(path, f"bad CSV: {exc}", "write RFC 4180 CSV with a header row", reader.line_num) from None


def _iter_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    pq = require("pyarrow.parquet", "parquet")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for corrupt files
        raise InputFileError(
            path,
            f"unreadable Parquet ({type(exc).__name__}: {exc})",
            "rewrite the file with pyarrow or pandas.to_parquet",
        ) from None
    yield from enumerate(table.to_pylist(), start=1)


_READERS = {
    ".jsonl": _iter_jsonl,
    ".ndjson": _iter_jsonl,
    ".json": _iter_json_list,
    ".csv": _iter_csv,
    ".parquet": _iter_parquet,
}


def _reader_for(path: Path):  # noqa: ANN202
    suffix = path.suffix.lower()
    if suffix == ".json":  # JSONL saved as .json is common: sniff the first non-space byte
        with open(path, "rb") as fh:
            head = fh.read(4096).lstrip()
        if head[:1] == b"{":
            return _iter_jsonl
    if suffix not in _READERS:
        raise InputFileError(
            path, f"unknown prediction-file extension {suffix or '(none)'!r}", f"use one of {', '.join(DATA_SUFFIXES)}"
        )
    return _READERS[suffix]


def _optional_float(path: Path, line: int, name: str, value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputFileError(
            path,
            f"field {name!r} is {value!r}, expected a number",
            f"write {name} as a number of seconds or leave it out",
            line,
        ) from None


def _optional_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _columns_of(path: Path, keys: list[Any], line: int, read: ReadOptions) -> tuple[str, str, str]:
    """The (id, reference, hypothesis) columns of a row with ``keys``: mapped by ``read``, else
    found by name (:func:`~asr_audit.corpus.reading.pick_column`); a one-line error otherwise."""
    found: list[str] = []
    for role, names, prefixes, what in (
        ("id", ID_COLUMNS, (), "clip id"),
        ("ref", REF_COLUMNS, (), "reference"),
        ("hyp", HYP_COLUMNS, HYP_PREFIXES, "hypothesis"),
    ):
        given = read.columns.get(role)
        col = pick_column(keys, names, prefixes, given=given)
        if col is None:
            raise InputFileError(
                path,
                (f"no column {given!r}" if given is not None else f"no {what} column")
                + f" (have: {header_names(keys)})",
                f'name the {what} column with --{role}-col NAME (a spec: columns = {{{role} = "NAME"}})'
                + ("" if given is not None else f", or call it one of {', '.join(names[:6])}, ..."),
                line,
            )
        found.append(col)
    return found[0], found[1], found[2]


def read_prediction_file(
    path: Path,
    name: FileName | None = None,
    *,
    shared: dict[str, str] | None = None,
    read: ReadOptions | None = None,
    repairs: Repairs | None = None,
) -> PredictionFile:
    """Read one prediction file into a :class:`PredictionFile`.

    ``shared`` (a dict kept across the files of one set) hands out one string object per
    distinct clip id, reference and hypothesis text, so that N models' files hold each clip's
    id and reference once rather than N times. ``read`` maps columns, takes ids by its rule and
    repairs mojibake (:class:`~asr_audit.corpus.reading.ReadOptions`); what it changed is noted
    in ``repairs``.
    """
    path = Path(path)
    if not path.is_file():
        raise InputFileError(path, "no such file", "check the path")
    name = name or parse_file_name(path)
    read = read or _DEFAULT_READ
    repairs = repairs if repairs is not None else Repairs()
    fix = encoding_fixer() if read.fix_encoding else None
    reader = _reader_for(path)
    rows: dict[str, PredictionRow] = {}
    cols: tuple[str, str, str] | None = None
    first_cols: tuple[str, str, str] | None = None
    for line, obj in reader(path):
        if cols is None or cols[0] not in obj:
            cols = _columns_of(path, list(obj), line, read)
            first_cols = first_cols or cols
            id_col, ref_col, hyp_col = cols
        clip_id = obj.get(id_col)
        if type(clip_id) is not str:
            clip_id = None if clip_id is None else str(clip_id)
        if clip_id is None or not clip_id.strip():
            raise InputFileError(path, f"empty clip id in column {id_col!r}", "give every row a clip id", line)
        if read.id_from != "as-is":
            raw_id, clip_id = clip_id, read.clip_id(clip_id)
            if not clip_id:
                raise InputFileError(
                    path,
                    f"--id-from {read.id_from} takes no id from {raw_id!r}",
                    "change the rule so it matches every row's id (the first group, else the whole match, is the id)",
                    line,
                )
            if clip_id != raw_id:
                repairs.note(f"clip ids taken by --id-from {read.id_from}", f"{tail(raw_id)} -> {clip_id!r}")
        ref = obj.get(ref_col)
        if type(ref) is not str:
            if ref is None:
                raise InputFileError(
                    path,
                    f"reference column {ref_col!r} is missing or null",
                    "give every row its reference text (an empty string for an empty reference)",
                    line,
                )
            if not isinstance(ref, str):
                raise InputFileError(
                    path,
                    f"reference is a {type(ref).__name__}, expected a string",
                    "write the reference as a JSON string",
                    line,
                )
        hyp = obj.get(hyp_col)
        if hyp is not None and not isinstance(hyp, str):
            raise InputFileError(
                path,
                f"hypothesis is a {type(hyp).__name__}, expected a string or null",
                "write the hypothesis as a JSON string (null when the model gave none)",
                line,
            )
        for what, text in (("reference", ref), ("hypothesis", hyp)):
            if text is not None and len(text) > MAX_TEXT_CHARS:
                raise InputFileError(
                    path,
                    f"the {what} of clip {clip_id!r} has {len(text):,} characters, more than any transcript "
                    f"({MAX_TEXT_CHARS:,} at most, about 15 hours of speech)",
                    "split long recordings into chunks with one row each, or fix the row",
                    line,
                )
        if fix is not None:
            ref, hyp = _fixed(fix, ref, repairs, "references"), _fixed(fix, hyp, repairs, "hypotheses")
        if clip_id in rows:
            raise InputFileError(
                path,
                f"duplicate clip id {clip_id!r} (first on line {rows[clip_id].line})",
                "keep one row per clip in each prediction file"
                + ("" if read.id_from == "as-is" else f" (--id-from {read.id_from} gave two rows this id)"),
                line,
            )
        if shared is not None:
            clip_id = shared.setdefault(clip_id, clip_id)
            ref = shared.setdefault(ref, ref)
            if hyp is not None:
                hyp = shared.setdefault(hyp, hyp)
        get = obj.get
        duration, at, language, speaker = get("duration"), get("time"), get("language"), get("speaker")
        rows[clip_id] = PredictionRow(
            clip_id,
            ref,
            hyp,
            duration
            if duration is None or type(duration) is float
            else _optional_float(path, line, "duration", duration),
            at if at is None or type(at) is float else _optional_float(path, line, "time", at),
            None if language is None else _optional_str(language),
            None if speaker is None else _optional_str(speaker),
            line,
        )
    if not rows:
        raise InputFileError(path, "file has no rows", "write at least one prediction row, or remove the file")
    _check_no_surrogates(path, rows)
    columns = dict(zip(COLUMN_ROLES, first_cols or ()))
    return PredictionFile(
        model=name.model, path=path, dataset=name.dataset, split=name.split, rows=rows, columns=columns
    )


_DEFAULT_READ = ReadOptions()


def _fixed(fix: Callable[[str], str], text: str | None, repairs: Repairs, what: str) -> Any:
    """``text`` with its mojibake repaired by ``fix`` (the change noted in ``repairs``)."""
    if text is None or text.isascii():
        return text
    new = fix(text)
    if new != text:
        repairs.note(f"{what} repaired by --fix-encoding", change(text, new))
    return new


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _has_surrogate_escape(path: Path, chunk: int = 1 << 20) -> bool:
    """Whether the file's bytes hold a ``\\ud8XX``-``\\udfXX`` escape, read a chunk at a time
    (consecutive chunks overlap by 5 bytes, so an escape across a boundary is seen)."""
    tail = b""
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            window = tail + block
            if _SURROGATE_ESCAPE.search(window):
                return True
            tail = window[-5:]
    return False


def _check_no_surrogates(path: Path, rows: Mapping[str, PredictionRow]) -> None:
    """Refuse text holding a lone UTF-16 surrogate (only a ``\\udXXX`` JSON escape can put one there:
    valid UTF-8 cannot); such text cannot be normalized, written or hashed. One byte scan per file."""
    if path.suffix.lower() not in (".jsonl", ".ndjson", ".json") or not _has_surrogate_escape(path):
        return
    for row in rows.values():
        for what, text in (("clip id", row.clip_id), ("reference", row.reference), ("hypothesis", row.hypothesis)):
            if text is not None and any("\ud800" <= ch <= "\udfff" for ch in text):
                raise InputFileError(
                    path,
                    f"{what} holds a lone surrogate escape (\\ud800-\\udfff), which is not text",
                    "write the text as valid Unicode (a surrogate pair or the character itself)",
                    row.line,
                )


def _is_ignored(path: Path) -> bool:
    low = path.name.lower()
    return (
        low.startswith(".")
        or path.suffix.lower() in IGNORED_SUFFIXES
        or any(low.startswith(stem) for stem in IGNORED_STEMS)
    )


def _check_not_a_file(path: Path, root: Path) -> None:
    """Refuse an entry of a prediction folder that is not a regular file but would be read as one.

    A dangling symbolic link, a FIFO, socket or device, and a directory named like a prediction
    file (``x.jsonl/``) would otherwise vanish from the run without a word. Other directories are
    the bucket layouts (searched one level deep). Nothing here opens ``path``: a FIFO never blocks.
    """
    import stat

    try:
        mode = path.lstat().st_mode
    except OSError as exc:  # vanished between listing and checking
        raise InputFileError(
            path,
            f"cannot read this entry of {root} ({exc.strerror or exc})",
            "remove it or pass a folder holding only prediction files",
        ) from None
    if stat.S_ISLNK(mode) and not path.exists():
        raise InputFileError(
            path,
            f"broken symbolic link (to {path.readlink()}) among the prediction files",
            f"point the link at an existing prediction file, or remove it from {root}",
        )
    if path.is_dir():
        if path.suffix.lower() in DATA_SUFFIXES:
            raise InputFileError(
                path,
                "a directory named like a prediction file",
                f"rename it (a bucket folder has no {path.suffix} suffix) or move it out of {root}",
            )
        return
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(path.stat().st_mode)
        else "a socket"
        if stat.S_ISSOCK(path.stat().st_mode)
        else "a device or other special file"
    )
    raise InputFileError(
        path,
        f"not a regular file ({kind}) among the prediction files",
        f"move it out of {root}; prediction files must be regular files (or links to them)",
    )


def discover_prediction_files(root: Path) -> list[tuple[Path, FileName]]:
    """Prediction files under ``root`` (a file, or a folder searched two levels deep)."""
    root = Path(root)
    if root.is_file():
        return [(root, parse_file_name(root))]
    if not root.is_dir():
        what = "not a regular file or folder" if root.exists() else "no such file or directory"
        raise InputFileError(root, what, "pass a prediction file or a folder of them")
    found: list[tuple[Path, FileName]] = []
    candidates = sorted(p for p in root.iterdir()) + sorted(
        p for d in sorted(root.iterdir()) if d.is_dir() and not d.name.startswith(".") for p in d.iterdir()
    )
    for p in candidates:
        if _is_ignored(p):
            continue
        if not p.is_file():
            _check_not_a_file(p, root)
            continue
        if p.suffix.lower() not in DATA_SUFFIXES:
            raise InputFileError(
                p,
                f"unknown prediction-file extension {p.suffix or '(none)'!r}",
                f"use one of {', '.join(DATA_SUFFIXES)} or move the file out of {root}",
            )
        found.append((p, parse_file_name(p, root)))
    if not found:
        raise InputFileError(
            root, "no prediction files found", f"put one file per model ({', '.join(DATA_SUFFIXES)}) in the folder"
        )
    return found


@dataclass(frozen=True, slots=True)
class ModelCoverage:
    model: str
    path: str
    n_rows: int
    n_hyp: int  # clips with a (possibly empty) hypothesis
    n_empty: int  # hypotheses that are ""
    n_missing: int  # clips of the set with no hypothesis (null, absent field, or absent row)


@dataclass(frozen=True, slots=True)
class PredictionSet:
    """All models' predictions for one dataset, with one reference per clip."""

    files: tuple[PredictionFile, ...]
    references: Mapping[str, str]  # clip id -> raw reference, sorted by clip id
    dataset: str | None = None
    source: str = ""
    _by_model: Mapping[str, PredictionFile] = field(default_factory=dict, repr=False)
    repairs: tuple[Repair, ...] = ()  # what reading changed (ReadOptions), counted with examples

    @property
    def models(self) -> list[str]:
        return [f.model for f in self.files]

    @property
    def clip_ids(self) -> list[str]:
        return list(self.references)

    def file(self, model: str) -> PredictionFile:
        try:
            return self._by_model[model]
        except KeyError:
            raise ConfigError(
                f"model {model!r} has no prediction file in {self.source}; available: {', '.join(self.models)}"
            ) from None

    def hypothesis(self, model: str, clip_id: str) -> str | None:
        row = self.file(model).rows.get(clip_id)
        return None if row is None else row.hypothesis

    def coverage(self) -> list[ModelCoverage]:
        out = []
        for f in self.files:
            n_hyp = sum(1 for r in f.rows.values() if r.hypothesis is not None)
            n_empty = sum(1 for r in f.rows.values() if r.hypothesis == "")
            out.append(ModelCoverage(f.model, str(f.path), len(f.rows), n_hyp, n_empty, len(self.references) - n_hyp))
        return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects (restored after).

    Loading creates a few objects per row and no reference cycles; the collector's passes over
    them (every 700 allocations) cost about a fifth of the loading time otherwise.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_predictions(
    path: str | Path,
    dataset: str | None = None,
    *,
    read: ReadOptions | None = None,
    normalize: Callable[[str], str] | None = None,
) -> PredictionSet:
    """Load every prediction file under ``path`` into one :class:`PredictionSet`.

    When the folder holds several datasets (bucket layout), ``dataset`` picks one.
    Two files for the same model, files whose clip ids barely overlap, or two different references
    for the same clip id are errors, unless ``read`` says otherwise
    (:class:`~asr_audit.corpus.reading.ReadOptions`: ``references = "normalized"`` compares
    references by ``normalize``, the run's normalizer). What ``read`` repaired is the set's
    :attr:`PredictionSet.repairs`.
    """
    with gc_paused():
        return _load_predictions(path, dataset, read or _DEFAULT_READ, normalize)


def select_prediction_files(
    path: str | Path, dataset: str | None = None
) -> tuple[list[tuple[Path, FileName]], str | None]:
    """The files :func:`load_predictions` reads for ``path`` and ``dataset``, in its order, and
    the dataset the set is of (``None`` when the names give none); raises the same errors."""
    root = Path(path)
    found = discover_prediction_files(root)
    datasets = sorted({n.dataset for _, n in found if n.dataset is not None})
    if dataset is not None:
        found = [(p, n) for p, n in found if n.dataset == dataset]
        if not found:
            raise InputFileError(
                root,
                f"no prediction files for dataset {dataset!r} (have: {', '.join(datasets) or 'none'})",
                "pass one of the datasets found, or leave --dataset out",
            )
    elif len(datasets) > 1:
        raise InputFileError(
            root, f"holds predictions for several datasets ({', '.join(datasets)})", "choose one with --dataset"
        )
    return found, dataset or (datasets[0] if datasets else None)


def _load_predictions(
    path: str | Path, dataset: str | None, read: ReadOptions, normalize: Callable[[str], str] | None
) -> PredictionSet:
    root = Path(path)
    found, dataset_name = select_prediction_files(root, dataset)
    files: list[PredictionFile] = []
    by_model: dict[str, PredictionFile] = {}
    shared: dict[str, str] = {}  # one object per distinct text across the files
    repairs = Repairs()
    for p, name in found:
        pf = read_prediction_file(p, name, shared=shared, read=read, repairs=repairs)
        if pf.model in by_model:
            raise InputFileError(
                p,
                f"a second prediction file for model {pf.model!r} (first: {by_model[pf.model].path})",
                "keep one file per model, or rename one of them",
            )
        by_model[pf.model] = pf
        files.append(pf)
    check_id_overlap([(f.path, f.rows.keys()) for f in files], read.min_id_overlap)
    references = _references(files, read, normalize, repairs)
    refs_sorted = {cid: references[cid] for cid in sorted(references)}
    return PredictionSet(tuple(files), refs_sorted, dataset_name, str(root), by_model, repairs.done())


def _references(
    files: Sequence[PredictionFile],
    read: ReadOptions,
    normalize: Callable[[str], str] | None,
    repairs: Repairs,
) -> dict[str, str]:
    """One reference per clip id from ``files``, under ``read.references``: ``strict`` (two
    different texts are an error), ``normalized`` (texts that ``normalize`` makes equal are one
    reference, the first file's text kept) or ``from:MODEL`` (that model's file gives the
    reference of every clip it has; the others are strict among themselves)."""
    order = list(files)
    source = read.reference_model
    if source is not None:
        chosen = next((f for f in files if f.model == source), None)
        if chosen is None:
            raise InputFileError(
                files[0].path.parent, from_model_missing(source, [f.model for f in files]), "name a model of the set"
            )
        order = [chosen, *(f for f in files if f is not chosen)]
    lenient = read.references == "normalized"
    if lenient and normalize is None:
        raise ValueError("references = 'normalized' needs the run's normalizer")
    key = reference_key(normalize if lenient else None)
    references: dict[str, str] = {}
    origin: dict[str, tuple[PredictionFile, int]] = {}
    keys: dict[str, Any] = {}
    for pf in order:
        for cid, row in pf.rows.items():
            ref = row.reference.strip()
            have = references.get(cid)
            if have is None:
                references[cid], origin[cid] = ref, (pf, row.line)
                continue
            if have == ref:
                continue
            first, line = origin[cid]
            seen = f"{change(have, ref)} ({first.model} vs {pf.model})"
            if source is not None and first.model == source:
                repairs.note(f"references of other files replaced by {source}'s", seen)
                continue
            if lenient:
                if cid not in keys:
                    keys[cid] = key(have)
                if key(ref) == keys[cid]:
                    repairs.note("references that differ but normalize equal (the first file's text kept)", seen)
                    continue
            raise InputFileError(
                pf.path,
                f"clip {cid!r} has reference {ref[:60]!r} here but {have[:60]!r} in {first.path}:{line}"
                + (f" (they differ at {change(have, ref)})" if ref[:60] == have[:60] else "")
                + (" (they differ after normalizing too)" if lenient else "")
                + mojibake_note(ref, have),
                "use the same reference text for a clip in every prediction file, or choose: "
                "--references normalized (accept texts that normalize equal) or from:MODEL (one file's references)",
                row.line,
            )
    return references


def load_references(path: str | Path) -> dict[str, str]:
    """Clip id -> reference text from one file (e.g. human-corrected references).

    Accepts the same formats and column names as prediction files; a hypothesis column is not
    needed. Duplicate ids are errors.
    """
    path = Path(path)
    if not path.is_file():
        raise InputFileError(path, "no such file", "pass a JSONL/JSON/CSV/Parquet file of clip ids and references")
    out: dict[str, str] = {}
    lines: dict[str, int] = {}
    cols: tuple[str | None, str | None] | None = None
    for line, obj in _reader_for(path)(path):
        if cols is None:
            keys = list(obj)
            cols = (_first(keys, ID_COLUMNS), _first(keys, REF_COLUMNS))
            for col, names, what in zip(cols, (ID_COLUMNS, REF_COLUMNS), ("clip id", "reference")):
                if col is None:
                    raise InputFileError(
                        path,
                        f"no {what} column (have: {', '.join(map(str, keys))})",
                        f"name the {what} column one of {', '.join(names)}",
                        line,
                    )
        cid, ref = obj.get(cols[0]), obj.get(cols[1])
        if cid is None or not isinstance(ref, str):
            raise InputFileError(
                path,
                "row lacks a clip id or a string reference",
                "give every row a clip id and a reference string",
                line,
            )
        cid = str(cid)
        if cid in out:
            raise InputFileError(
                path, f"duplicate clip id {cid!r} (first on line {lines[cid]})", "keep one row per clip", line
            )
        out[cid], lines[cid] = ref.strip(), line
    if not out:
        raise InputFileError(path, "file has no rows", "write at least one reference row")
    return out


def add_prediction_files(
    pset: PredictionSet | None, files: Sequence[PredictionFile], source: str = ""
) -> PredictionSet:
    """``pset`` (or an empty set) with ``files`` added, checked as :func:`load_predictions` checks a folder.

    A model name already in the set, or a reference that differs from the set's for the same clip
    id, is an :class:`~asr_audit.errors.InputFileError` naming the file and row.
    """
    have: list[PredictionFile] = list(pset.files) if pset is not None else []
    by_model = {f.model: f for f in have}
    references = dict(pset.references) if pset is not None else {}
    origin: dict[str, tuple[Path, int]] = {}
    for f in have:
        for cid, r in f.rows.items():
            origin.setdefault(cid, (f.path, r.line))
    for pf in files:
        if pf.model in by_model:
            raise InputFileError(
                pf.path,
                f"a second prediction file for model {pf.model!r} (first: {by_model[pf.model].path})",
                "keep one file per model, or rename one of them",
            )
        for cid, row in pf.rows.items():
            ref = row.reference.strip()
            if cid in references and references[cid] != ref:
                op, ol = origin[cid]
                raise InputFileError(
                    pf.path,
                    f"clip {cid!r} has reference {ref[:60]!r} here but {references[cid][:60]!r} in {op}:{ol}",
                    "use the same reference text for a clip in every prediction file",
                    row.line,
                )
            if cid not in references:
                references[cid], origin[cid] = ref, (pf.path, row.line)
        by_model[pf.model] = pf
        have.append(pf)
    refs_sorted = {cid: references[cid] for cid in sorted(references)}
    dataset = pset.dataset if pset is not None else None
    return PredictionSet(tuple(have), refs_sorted, dataset, source or (pset.source if pset else ""), by_model)
