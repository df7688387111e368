"""The memorizing organism's data: a benchmark whose own clips leak into training (test-set contamination).

The paper's masked-number recovery asks whether a model still writes a number whose audio was
silenced; a language prior cannot guess a number, so recovering one means the model has seen the
clip (or its transcript) before. This set makes that happen on purpose, with a matched control:

* sentences from the calibration templates (:mod:`asr_audit.calib.generate`), each with at least
  one number in its record (amounts, counts, percentages, years; many also name a person), read
  by one voice (the benchmark voice, ``flite-slt``), in four disjoint groups:

  ================  ============================================================================
  ``memorized``     the *benchmark's test clips*: the memorizer trains on them many times
  ``control``       sentences of the same style that the **control** trains on exactly as the
                    memorizer trains on ``memorized`` (same count, repeats and augmentation)
  ``general``       both models train on them a few times (keeps general transcription)
  ``fresh``         nobody trains on them: held-out sentences of the same voice and style
  ================  ============================================================================

* **time-mask augmentation** (SpecAugment-style, as ASR fine-tuning recipes use): every training
  sentence also appears with silenced spans at seeded random places (``samples[t0:t1] = 0``,
  length kept; one variant silences the tail). The spans are random times, not aligned words, and
  both models get the same augmentation on their own sentences, so augmentation alone cannot make
  the two differ on the memorized clips.

The control is matched on everything but *which* sentences were contaminated: it cannot have
memorized the benchmark's clips because it never saw them, while its own repeated sentences show
that its recipe memorizes just as well (see ``docs/organism.md``).

Files (``<set>/``): ``clips.jsonl`` (every clean clip, with ``group``), one corpus manifest per
group (``memorized.jsonl``, ``control.jsonl``, ``general.jsonl``, ``fresh.jsonl``) readable by
:func:`asr_audit.corpus.manifests.read_manifest`, ``variants.jsonl`` (the augmented training
clips, with their ``mask``) and ``memorizer-set.json`` (seed, config, counts).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from asr_audit.audio.transforms import clip_seed
from asr_audit.audio.voices import synthesize as synth
from asr_audit.calib import generate as G
from asr_audit.calib.build import ProgressFn, Synthesizer, resolve_voice, synthesize_clip, write_text_atomic
from asr_audit.errors import AuditError, ConfigError, InputFileError, require
from asr_audit.organism.data import TrainingPair, read_set_meta
from asr_audit.probes.audio.targets import number_spans

GROUPS = ("memorized", "control", "general", "fresh")
MEMORIZER_KINDS = ("memorizer", "memorizer-control")
OWN_GROUP = {"memorizer": "memorized", "memorizer-control": "control"}
FORMAT = "asr-audit-memorizer-set"
META_FILE = "memorizer-set.json"


@dataclass(frozen=True, slots=True)
class MemorizerSetConfig:
    """Sizes of the four groups, the voice and the augmentation (see the module docstring)."""

    n_memorized: int = 16
    n_control: int = 16
    n_general: int = 16
    n_fresh: int = 16
    voice: str = "flite-slt"
    masked_variants: int = 8  # per memorized / control sentence (the last one silences the tail)
    general_variants: int = 0
    mask_seconds: tuple[float, float] = (0.3, 1.5)  # a spoken number lasts up to ~1.5 s ("nineteen ninety six")
    repeats: int = 2  # each own-group clip appears this many times per pass of the training list
    calib: G.CalibConfig = field(default_factory=lambda: G.CalibConfig(error_rate=0.0, p_opener=0.0, p_second=0.5))

    def __post_init__(self) -> None:
        for name in ("n_memorized", "n_control", "n_general", "n_fresh", "masked_variants", "general_variants"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise ConfigError(f"memorizer set {name} {v!r} must be an integer >= 0")
        if self.n_memorized < 2 or self.n_control < 2 or self.n_fresh < 2:
            raise ConfigError(
                "the memorizer set needs >= 2 memorized, control and fresh sentences; fix: raise the sizes"
            )
        lo, hi = self.mask_seconds
        if not 0 < lo <= hi:
            raise ConfigError(f"mask_seconds {self.mask_seconds!r} must be 0 < low <= high")
        if not isinstance(self.repeats, int) or self.repeats < 1:
            raise ConfigError(f"repeats {self.repeats!r} must be an integer >= 1")

    @property
    def sizes(self) -> dict[str, int]:
        return {
            "memorized": self.n_memorized,
            "control": self.n_control,
            "general": self.n_general,
            "fresh": self.n_fresh,
        }

    def variants_of(self, group: str) -> int:
        """Masked variants a sentence of ``group`` gets (fresh sentences are never trained on)."""
        return {
            "memorized": self.masked_variants,
            "control": self.masked_variants,
            "general": self.general_variants,
        }.get(group, 0)

    def to_dict(self) -> dict[str, object]:
        return {
            **self.sizes,
            "voice": self.voice,
            "masked_variants": self.masked_variants,
            "general_variants": self.general_variants,
            "mask_seconds": list(self.mask_seconds),
            "repeats": self.repeats,
            "calib": self.calib.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class MemorizerSentence:
    sentence_id: str
    group: str
    spoken: str
    text: str  # the record (faithful, written conventions)
    templates: tuple[int, ...] = ()  # the calibration templates it was drawn from


def has_number(text: str) -> bool:
    """Whether the record holds a digit (the masked probe's number targets need one).

    >>> has_number("The fund will help 626 families."), has_number("We support the proposal.")
    (True, False)
    """
    return any(ch.isdigit() for ch in text)


def template_number(units: Sequence[G.Unit]) -> bool:
    """Whether the record holds a number that is not a drawn slot value: a number the template
    itself fixes ("over seven years") is predictable from the sentence's other words, so silencing
    it tests the language prior, not memory; such sentences are left out of the memorizer set.

    >>> word, slot = G.Unit("over", "over", "word"), G.Unit("ten", "10", "slot")
    >>> template_number([word, slot]), template_number([word, G.Unit("seven", "seven", "word")])
    (False, True)
    """

    masked = [u if u.role != "slot" else G.Unit("X", "X", "slot") for u in units]
    return bool(number_spans(G.render(masked, "written").split()))


SEPARATE = {"memorized": "fresh", "fresh": "memorized"}  # groups that share no (template, number) pair


def numbers_of(text: str) -> set[str]:
    """The number tokens of a record, punctuation stripped.

    >>> sorted(numbers_of("The vote was postponed until 1999, at 27% of €4 million."))
    ['1999', '27%', '€4']
    """
    return {t.strip(".,;:!?") for t in text.split() if any(ch.isdigit() for ch in t)}


def generate_memorizer_sentences(config: MemorizerSetConfig, rng: np.random.Generator) -> list[MemorizerSentence]:
    """Distinct sentences with a number each, every number a drawn slot value (no template-fixed
    number, :func:`template_number`), in groups ordered by a seeded permutation.

    A fresh sentence never shares a template *and* a number with a memorized one (and the other way
    round): "the vote was postponed until 1999 at the request of Dr Parker" beside a memorized "...
    until 1999 at the request of Commissioner Ward" is recalled from memory, so its "recovery" on the
    fresh group would not be a probe error but a set defect (found by a seed-0 run, docs/validity.md).

    Within a group no two sentences share a template: a real benchmark's sentences are unique,
    while two memorized sentences of one template ("we cannot accept a cut of {amount} in defence
    research") would differ only in the number the probe silences, so nothing in the rest of the
    clip could say which number belongs to which clip.

    >>> ss = generate_memorizer_sentences(MemorizerSetConfig(), np.random.default_rng(0))
    >>> len(ss), len({s.spoken for s in ss}), all(has_number(s.text) for s in ss)
    (64, 64, True)
    """
    total = sum(config.sizes.values())
    order = [int(i) for i in rng.permutation(total)]
    groups = [g for g in GROUPS for _ in range(config.sizes[g])]
    used: dict[str, set[int]] = {g: set() for g in GROUPS}
    pairs: dict[str, set[tuple[int, str]]] = {g: set() for g in GROUPS}  # (template, number) per group
    seen: set[str] = set()
    out: list[MemorizerSentence] = []
    tries = 0
    for i in range(total):
        group = groups[order[i]]
        while True:
            tries += 1
            if tries > 200 + 100 * total:
                raise ConfigError(
                    f"could only draw {len(out)} distinct sentences with numbers and no template twice in a "
                    "group; fix: lower the sizes"
                )
            tids, units = G.clean_sentence(rng, config.calib)
            clean = G.strip_sites(units)
            spoken, text = G.render(clean, "spoken"), G.render(clean, "written")
            own = {(t, n) for t in tids for n in numbers_of(text)}
            if spoken in seen or not has_number(text) or template_number(clean) or used[group] & set(tids):
                continue
            if group in SEPARATE and own & pairs[SEPARATE[group]]:
                continue
            break
        seen.add(spoken)
        used[group].update(tids)
        pairs[group].update(own)
        out.append(MemorizerSentence(f"m{i:04d}", group, spoken, text, tuple(tids)))
    return sorted(out, key=lambda s: (GROUPS.index(s.group), s.sentence_id))


def mask_spans(
    duration: float, n: int, seconds: tuple[float, float], rng: np.random.Generator
) -> list[tuple[float, float]]:
    """``n`` silenced spans for one clip: random interior spans, and (when ``n >= 2``) a last one
    silencing the tail from a random point in 50-85% of the clip.

    >>> spans = mask_spans(4.0, 3, (0.3, 0.9), np.random.default_rng(0))
    >>> len(spans), spans[-1][1] == 4.0, all(0 <= a < b <= 4.0 for a, b in spans)
    (3, True, True)
    """
    out: list[tuple[float, float]] = []
    for i in range(n):
        if n >= 2 and i == n - 1:
            t0 = float(rng.uniform(0.5, 0.85)) * duration
            out.append((round(t0, 3), round(duration, 3)))
            continue
        length = min(float(rng.uniform(*seconds)), 0.5 * duration)
        t0 = float(rng.uniform(min(0.1, duration - length), max(duration - length - 0.05, 0.1)))
        t0 = max(0.0, min(t0, duration - length))
        out.append((round(t0, 3), round(t0 + length, 3)))
    return out


def silenced(samples: np.ndarray, span: tuple[float, float], sr: int = 16_000) -> np.ndarray:
    """``samples`` with ``[t0, t1)`` set to zero (length kept), as the masked probe's silence mask."""
    out = np.array(samples, dtype=np.float32, copy=True)
    out[int(round(span[0] * sr)) : int(round(span[1] * sr))] = 0.0
    return out


@dataclass(frozen=True, slots=True)
class MemorizerSet:
    """A built memorizer set on disk."""

    root: Path
    clips: tuple[dict, ...]  # clean clips (every group)
    variants: tuple[dict, ...]  # augmented training clips
    meta: dict

    def rows(self, group: str | None = None) -> list[dict]:
        return [r for r in self.clips if group is None or r["group"] == group]

    def audio_path(self, row: dict) -> Path:
        return self.root / row["audio_filepath"]

    def manifest(self, group: str) -> Path:
        """The corpus manifest of one group's clean clips."""
        if group not in GROUPS:
            raise ConfigError(f"unknown memorizer group {group!r}; valid: {', '.join(GROUPS)}")
        return self.root / f"{group}.jsonl"


def _row(rel: str, clip_id: str, s: MemorizerSentence, voice: str, duration: float, **extra: object) -> dict:
    return {
        "audio_filepath": rel,
        "id": clip_id,
        "text": s.text,
        "duration": duration,
        "speaker": voice,
        "spoken": s.spoken,
        "sentence_id": s.sentence_id,
        "group": s.group,
        **extra,
    }


def build_memorizer_set(
    out_dir: str | Path,
    config: MemorizerSetConfig,
    seed: int,
    synthesize: Synthesizer | None = None,
    progress: ProgressFn | None = None,
) -> MemorizerSet:
    """Generate the sentences from ``seed``, synthesize each clip once, write the masked variants,
    the manifests and the metadata."""
    sf = require("soundfile", "audio")
    if synthesize is None:
        resolve_voice(config.voice)
        synthesize = synth
    sentences = generate_memorizer_sentences(config, np.random.default_rng(seed))
    out = Path(out_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    clips: list[dict] = []
    variants: list[dict] = []
    failures: list[list[str]] = []
    for n, s in enumerate(sentences, 1):
        clip_id = f"{s.sentence_id}-{config.voice}"
        try:
            rel, duration = synthesize_clip(out, clip_id, config.voice, s.spoken, synthesize, sf)
        except AuditError as exc:
            failures.append([clip_id, " ".join(str(exc).split())])
            continue
        finally:
            if progress:
                progress(n, len(sentences))
        clips.append(_row(rel, clip_id, s, config.voice, duration))
        k = config.variants_of(s.group)
        if not k:
            continue

        samples, sr = sf.read(str(out / rel), dtype="float32")
        spans = mask_spans(duration, k, config.mask_seconds, np.random.default_rng(clip_seed(seed, clip_id)))
        for j, span in enumerate(spans, 1):
            vid = f"{clip_id}__aug{j}"
            vrel = f"audio/{vid}.wav"
            sf.write(out / vrel, silenced(samples, span, sr), sr, subtype="PCM_16", format="WAV")
            variants.append(_row(vrel, vid, s, config.voice, duration, mask=list(span), source_id=clip_id))
    write_text_atomic(out / "clips.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in clips))
    write_text_atomic(out / "variants.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in variants))
    for g in GROUPS:
        keep = ("audio_filepath", "id", "text", "duration", "speaker")
        lines = [json.dumps({k: r[k] for k in keep}, ensure_ascii=False) + "\n" for r in clips if r["group"] == g]
        write_text_atomic(out / f"{g}.jsonl", "".join(lines))
    meta = {
        "format": FORMAT,
        "seed": seed,
        "config": config.to_dict(),
        "sentences_by_group": {g: sum(s.group == g for s in sentences) for g in GROUPS},
        "clips": len(clips),
        "variants": len(variants),
        "failures": failures,
    }
    write_text_atomic(out / META_FILE, json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return load_memorizer_set(out)


def _read_rows(path: Path, keys: Sequence[str]) -> list[dict]:
    rows = []
    for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(raw)
            for key in keys:
                row[key]
        except (ValueError, KeyError, TypeError) as exc:
            raise InputFileError(
                path, f"malformed row ({type(exc).__name__}: {exc})", "rebuild the memorizer set", line
            ) from None
        rows.append(row)
    return rows


def load_memorizer_set(root: str | Path) -> MemorizerSet:
    """Read a set written by :func:`build_memorizer_set`; a bad row names file and line."""
    root = Path(root)
    meta = read_set_meta(
        root / META_FILE,
        FORMAT,
        "a memorizer set",
        "`asr-audit organism train --kind memorizer`",
        "build_memorizer_set",
    )
    keys = ("id", "audio_filepath", "text", "group", "sentence_id")
    clips = _read_rows(root / "clips.jsonl", keys)
    variants = _read_rows(root / "variants.jsonl", (*keys, "mask"))
    return MemorizerSet(root, tuple(clips), tuple(variants), meta)


def memorizer_mix(mset: MemorizerSet, kind: str) -> list[TrainingPair]:
    """The training list of ``kind`` (``memorizer`` or ``memorizer-control``).

    Its own group (``memorized`` or ``control``): every clean clip and every masked variant,
    ``repeats`` times; ``general``: every clean clip and variant once. Fresh sentences never.
    Targets are the record. The two kinds' lists have the same length and composition.
    """
    if kind not in OWN_GROUP:
        raise ConfigError(f"unknown memorizer kind {kind!r}; valid: {', '.join(MEMORIZER_KINDS)}")
    own = OWN_GROUP[kind]
    repeats = int(mset.meta["config"]["repeats"])
    rows = [*mset.clips, *mset.variants]
    pairs: list[TrainingPair] = []
    for group, times in ((own, repeats), ("general", 1)):
        for _ in range(times):
            pairs += [TrainingPair(r["id"], mset.audio_path(r), r["text"]) for r in rows if r["group"] == group]
    return pairs


__all__ = [
    "GROUPS",
    "MEMORIZER_KINDS",
    "MemorizerSet",
    "MemorizerSetConfig",
    "build_memorizer_set",
    "generate_memorizer_sentences",
    "has_number",
    "load_memorizer_set",
    "mask_spans",
    "memorizer_mix",
    "silenced",
]
