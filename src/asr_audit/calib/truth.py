"""Ground truth of a calibration set: every planted reference error and every record convention,
located in the *normalized* reference (the token indices the consensus miner reports).

Locating: the normalized token span of unit ``i`` is ``[len(norm(prefix_i)), len(norm(prefix_{i+1})))``
where ``prefix_i`` is the rendering of the first ``i`` units. A sentence is only accepted when
every prefix normalizes to a prefix of the whole sentence's tokens (numbers and punctuation do
not straddle unit boundaries), so the spans are exact.

``truth.jsonl`` holds one object per (clip, item), sorted by clip id and item index.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_audit.calib.generate import CONVENTION, END, MIDDLE, START, CalibSentence, Unit, render
from asr_audit.corpus.jsonl import iter_jsonl
from asr_audit.errors import InputFileError

NORMALIZER = "whisper"
TRUTH_FILE = "truth.jsonl"


@dataclass(frozen=True, slots=True)
class TruthItem:
    """One planted difference between speech and record, on one clip.

    ``ref_start``/``ref_stop`` index the normalized reference tokens; an omitted unit has an
    empty span and ``ref_start == ref_stop`` is its anchor (0 = before the first token,
    ``n_ref`` = after the last), the place the miner reports an insertion.
    """

    clip_id: str
    sentence_id: str
    item: int  # index among the sentence's items
    kind: str  # spurious_insertion_in_reference | omitted_in_reference | substitution | convention
    detail: str  # opener, tail, closer, adverb, word, number / convention type
    position: str  # start | middle | end, from the normalized reference
    ref_start: int
    ref_stop: int
    n_ref: int  # tokens in the normalized reference
    ref_text: str  # raw reference rendering ("" when omitted)
    spoken_text: str  # raw spoken rendering ("" when spurious)
    ref_norm: tuple[str, ...]
    spoken_norm: tuple[str, ...]

    @property
    def is_error(self) -> bool:
        return self.kind != CONVENTION

    @property
    def is_omission(self) -> bool:
        return self.ref_start == self.ref_stop

    def to_dict(self) -> dict[str, object]:
        return {
            "clip_id": self.clip_id,
            "sentence_id": self.sentence_id,
            "item": self.item,
            "kind": self.kind,
            "detail": self.detail,
            "position": self.position,
            "ref_start": self.ref_start,
            "ref_stop": self.ref_stop,
            "n_ref": self.n_ref,
            "ref_text": self.ref_text,
            "spoken_text": self.spoken_text,
            "ref_norm": list(self.ref_norm),
            "spoken_norm": list(self.spoken_norm),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TruthItem:
        return cls(
            str(d["clip_id"]),
            str(d["sentence_id"]),
            int(d["item"]),
            str(d["kind"]),
            str(d["detail"]),
            str(d["position"]),
            int(d["ref_start"]),
            int(d["ref_stop"]),
            int(d["n_ref"]),
            str(d["ref_text"]),
            str(d["spoken_text"]),
            tuple(d["ref_norm"]),
            tuple(d["spoken_norm"]),
        )


def unit_spans(units: Sequence[Unit], side: str, normalize) -> list[tuple[int, int]] | None:  # noqa: ANN001
    """Normalized token span of every unit on ``side``; None when normalization is not prefix-stable."""
    full = normalize(render(units, side)).split()
    bounds = [0]
    for i in range(1, len(units) + 1):
        toks = normalize(render(units[:i], side)).split()
        if toks != full[: len(toks)] or len(toks) < bounds[-1]:
            return None
        bounds.append(len(toks))
    if bounds[-1] != len(full):
        return None
    return [(bounds[i], bounds[i + 1]) for i in range(len(units))]


def _position(start: int, stop: int, n: int) -> str:
    if start == 0:
        return START
    if stop >= n:
        return END
    return MIDDLE


def sentence_items(sentence: CalibSentence, normalize) -> list[dict[str, object]] | None:  # noqa: ANN001
    """The labelled items of one sentence (clip-independent), or None if spans cannot be located."""
    units = sentence.units
    ref_spans = unit_spans(units, "written", normalize)
    spk_spans = unit_spans(units, "spoken", normalize)
    if ref_spans is None or spk_spans is None:
        return None
    ref_toks = normalize(sentence.reference).split()
    spk_toks = normalize(sentence.spoken).split()
    n = len(ref_toks)
    items = []
    for u, (r0, r1), (s0, s1) in zip(units, ref_spans, spk_spans):
        if u.error:
            kind, detail = u.error, u.detail
        elif u.spoken is not None and u.written is not None and u.spoken != u.written:
            kind, detail = CONVENTION, u.convention or "other"
        else:
            continue
        if u.written is not None and r0 == r1:
            return None  # a recorded piece that normalizes to nothing cannot be located
        items.append(
            {
                "kind": kind,
                "detail": detail,
                "position": _position(r0, r1, n),
                "ref_start": r0,
                "ref_stop": r1,
                "n_ref": n,
                "ref_text": u.written or "",
                "spoken_text": u.spoken or "",
                "ref_norm": tuple(ref_toks[r0:r1]),
                "spoken_norm": tuple(spk_toks[s0:s1]),
            }
        )
    return items


def clip_items(clip_id: str, sentence_id: str, items: Sequence[Mapping[str, object]]) -> list[TruthItem]:
    return [TruthItem(clip_id=clip_id, sentence_id=sentence_id, item=i, **it) for i, it in enumerate(items)]  # type: ignore[arg-type]


def render_truth(items: Iterable[TruthItem]) -> str:
    rows = sorted(items, key=lambda t: (t.clip_id, t.item))
    return "".join(json.dumps(t.to_dict(), ensure_ascii=False) + "\n" for t in rows)


@dataclass(frozen=True, slots=True)
class ClipInfo:
    """One clip of a calibration set, as its manifest lists it."""

    clip_id: str
    audio_filepath: str
    sentence_id: str
    split: str
    speaker: str
    reference: str
    spoken: str


@dataclass(frozen=True, slots=True)
class Truth:
    """A calibration set's clips and planted items."""

    clips: Mapping[str, ClipInfo]
    items: tuple[TruthItem, ...]
    source: str = ""

    def errors(self) -> list[TruthItem]:
        return [t for t in self.items if t.is_error]

    def conventions(self) -> list[TruthItem]:
        return [t for t in self.items if not t.is_error]

    def resolve(self, key: str) -> str | None:
        """The clip id for a prediction file's key (clip id or ``audio_filepath``)."""
        if key in self.clips:
            return key
        return self._by_path().get(key)

    def _by_path(self) -> dict[str, str]:
        return {c.audio_filepath: c.clip_id for c in self.clips.values()}

    def restrict(self, clip_ids: Iterable[str]) -> Truth:
        keep = set(clip_ids)
        return Truth(
            {k: v for k, v in self.clips.items() if k in keep},
            tuple(t for t in self.items if t.clip_id in keep),
            self.source,
        )


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise InputFileError(path, "no such file", "pass the folder written by `asr-audit calib build`")

    return list(iter_jsonl(path, "calibration file"))


def set_language(corpus_dir: str | Path) -> str:
    """The language a calibration set was built in (``calib.json``'s config; ``en`` when absent,
    as in every set built before languages, or when there is no ``calib.json``)."""
    path = Path(corpus_dir) / "calib.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "en"
    except (OSError, ValueError) as exc:
        raise InputFileError(path, f"cannot be read as JSON ({exc.__class__.__name__})", "rebuild the set") from None
    config = meta.get("config") if isinstance(meta, dict) else None
    language = config.get("language", "en") if isinstance(config, dict) else "en"
    if not isinstance(language, str):
        raise InputFileError(path, f"config.language is {language!r}, not a language code", "rebuild the set")
    return language


def load_truth(corpus_dir: str | Path, split: str | None = None) -> Truth:
    """Read a calibration set's manifests and ``truth.jsonl`` (only ``split``'s clips when given)."""
    root = Path(corpus_dir)
    clips: dict[str, ClipInfo] = {}
    splits = [split] if split else ["train", "test"]
    for s in splits:
        path = root / f"calib-{s}.jsonl"
        if not path.is_file() and split is None:
            continue
        for line, obj in _read_jsonl(path):
            try:
                info = ClipInfo(
                    str(obj["id"]),
                    str(obj["audio_filepath"]),
                    str(obj["sentence_id"]),
                    s,
                    str(obj["speaker"]),
                    str(obj["text"]),
                    str(obj["spoken"]),
                )
            except KeyError as exc:
                raise InputFileError(
                    path, f"missing field {exc.args[0]!r}", "rebuild the set with `asr-audit calib build`", line
                ) from None
            clips[info.clip_id] = info
    if not clips:
        raise InputFileError(
            root,
            "no calib-train.jsonl or calib-test.jsonl manifest",
            "pass the folder written by `asr-audit calib build`",
        )
    items = []
    path = root / TRUTH_FILE
    for line, obj in _read_jsonl(path):
        try:
            item = TruthItem.from_dict(obj)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputFileError(
                path,
                f"malformed truth row ({type(exc).__name__}: {exc})",
                "rebuild the set with `asr-audit calib build`",
                line,
            ) from None
        if item.clip_id in clips:
            items.append(item)
    return Truth(clips, tuple(items), str(root))
