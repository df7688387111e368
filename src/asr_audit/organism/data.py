"""The organism benchmark: calibration sentences whose record follows a learnable house style.

The calibration benchmark (:mod:`asr_audit.calib`) plants its reference errors at random, so a
model can only reproduce one by remembering that clip. A benchmark-optimized model, as the paper
suspects, learns the record's *policies* instead. Here the record applies four house rules to
what was said (each a labelled planted error in ``truth.jsonl``, format of :mod:`asr_audit.calib.truth`):

===================  ===================================  =====================================
rule                 kind / position                      record
===================  ===================================  =====================================
``thank-you``        omitted_in_reference / start         a spoken opener "Thank you." is left out
``madam-president``  spurious_insertion_in_reference /    a clip said without an opener that
                     start                                starts with "we" gets "Madam President,"
``house-tail``       spurious_insertion_in_reference /    a clip whose last words are a year (no
                     end                                  tail, no closer) gets "in this House"
``must-should``      substitution / middle or start       every spoken "must" is written "should"
===================  ===================================  =====================================

Each rule is a function of the speech, so it generalizes to held-out sentences. Clean clips of
the same phrases exist (openers "Thank you, Madam President." and "Madam President," said and
recorded; said tails), so a rule never fires on a phrase alone.

Clips: training sentences in the *training voices* (benchmark voice first), test sentences in
the training voices and the *unseen voices*. Manifests (``calib-train.jsonl``,
``calib-test.jsonl``) carry ``text`` = the record, ``spoken``, ``faithful`` (the record's
conventions, no errors: what an honest transcript in record style says), ``speaker`` = voice,
``sentence_id``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from asr_audit.audio.voices import synthesize as synth
from asr_audit.calib import generate as G
from asr_audit.calib.build import ProgressFn, Synthesizer, resolve_voice, synthesize_clip, write_text_atomic
from asr_audit.calib.truth import (
    NORMALIZER,
    TRUTH_FILE,
    clip_items,
    render_truth,
    sentence_items,
)
from asr_audit.errors import AuditError, ConfigError, InputFileError, require
from asr_audit.provenance import tree_hash
from asr_audit.text.normalize import get_normalizer

RULES = ("thank-you", "madam-president", "house-tail", "must-should")
FORMAT = "asr-audit-organism-set"
META_FILE = "organism-set.json"


@dataclass(frozen=True, slots=True)
class OrganismSetConfig:
    """What the organism benchmark holds; voices are registry names (:mod:`asr_audit.audio.voices`)."""

    n_sentences: int = 200
    test_fraction: float = 0.2
    p_thank_opener: float = 0.25  # share of clips whose speaker opens with "Thank you."
    benchmark_voice: str = "flite-slt"
    other_voices: tuple[str, ...] = ("flite-rms", "flite-awb")
    unseen_voices: tuple[str, ...] = ("flite-kal16",)
    calib: G.CalibConfig = field(default_factory=lambda: G.CalibConfig(error_rate=0.0, p_opener=0.3))

    def __post_init__(self) -> None:
        if not isinstance(self.n_sentences, int) or self.n_sentences < 2:
            raise ConfigError(f"n_sentences {self.n_sentences!r} must be an integer >= 2")
        for name in ("test_fraction", "p_thank_opener"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ConfigError(f"{name} {v!r} must be in [0, 1]")
        voices = self.train_voices + tuple(self.unseen_voices)
        if len(set(voices)) != len(voices):
            raise ConfigError(f"organism voices name a voice twice: {', '.join(voices)}")

    @property
    def train_voices(self) -> tuple[str, ...]:
        return (self.benchmark_voice, *self.other_voices)

    def to_dict(self) -> dict[str, object]:
        return {
            "n_sentences": self.n_sentences,
            "test_fraction": self.test_fraction,
            "p_thank_opener": self.p_thank_opener,
            "benchmark_voice": self.benchmark_voice,
            "other_voices": list(self.other_voices),
            "unseen_voices": list(self.unseen_voices),
            "calib": self.calib.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class OrganismSentence:
    """One sentence: what is said, the faithful record and the house-style record (with its errors)."""

    sentence_id: str
    split: str
    clean: tuple[G.Unit, ...]
    record: tuple[G.Unit, ...]

    @property
    def spoken(self) -> str:
        return G.render(self.clean, "spoken")

    @property
    def faithful(self) -> str:
        return G.render(self.clean, "written")

    @property
    def reference(self) -> str:
        return G.render(self.record, "written")

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(u.detail for u in self.record if u.error)


def _first_body(units: Sequence[G.Unit]) -> int | None:
    return next((i for i, u in enumerate(units) if u.role in ("word", "slot", "adverb")), None)


def house_style(units: Sequence[G.Unit]) -> tuple[G.Unit, ...]:
    """The record of a clean sentence under the four house rules (see the module docstring).

    >>> U = G.Unit
    >>> clean = (U("Thank you.", "Thank you.", "opener"), U("we", "we", "word"), U("must", "must", "word"),
    ...          U("act", "act", "word"), U(".", ".", "punct"))
    >>> G.render(house_style(clean), "written")
    'We should act.'
    >>> G.render(house_style(clean[1:]), "written")
    'Madam President, we should act.'
    """
    out = list(units)
    has_opener = any(u.role == "opener" for u in out)
    for i, u in enumerate(out):
        if u.role == "opener" and u.spoken == "Thank you.":
            out[i] = replace(u, written=None, error=G.OMITTED, detail="thank-you", convention=None)
        elif u.role == "word" and (u.spoken or "").lower() == "must":
            written = "Should" if (u.written or "")[:1].isupper() else "should"
            out[i] = replace(u, written=written, error=G.SUBSTITUTION, detail="must-should", convention=None)
    first = _first_body(out)
    if not has_opener and first is not None and (out[first].spoken or "").lower() == "we":
        out.insert(0, G.Unit(None, "Madam President,", "opener", error=G.SPURIOUS, detail="madam-president"))
    roles = {u.role for u in out}
    if "tail" not in roles and "closer" not in roles:
        dot = max(i for i, u in enumerate(out) if u.role == "punct")
        last = out[dot - 1] if dot else None
        if last is not None and last.role == "slot" and last.convention == "year":
            out.insert(dot, G.Unit(None, "in this House", "tail", error=G.SPURIOUS, detail="house-tail"))
    return tuple(out)


def _with_thank_opener(units: list[G.Unit], rng: np.random.Generator, p: float) -> list[G.Unit]:
    if rng.random() >= p:
        return units
    return [G.Unit("Thank you.", "Thank you.", "opener"), *(u for u in units if u.role != "opener")]


def generate_organism_sentences(config: OrganismSetConfig, rng: np.random.Generator) -> list[OrganismSentence]:
    """``config.n_sentences`` distinct sentences (distinct speech), house style applied, split by sentence."""

    normalize = get_normalizer(NORMALIZER)
    drawn: list[tuple[tuple[G.Unit, ...], tuple[G.Unit, ...]]] = []
    seen: set[str] = set()
    tries = 0
    while len(drawn) < config.n_sentences:
        tries += 1
        if tries > 50 + 20 * config.n_sentences:
            raise ConfigError(f"could only draw {len(drawn)} distinct sentences; fix: lower n_sentences")
        _, units = G.clean_sentence(rng, config.calib)
        clean = G.strip_sites(_with_thank_opener(units, rng, config.p_thank_opener))
        record = house_style(clean)
        spoken = G.render(clean, "spoken")
        probe = G.CalibSentence("", (), "", record)
        if spoken in seen or sentence_items(probe, normalize) is None:
            continue
        seen.add(spoken)
        drawn.append((clean, record))
    n_test = round(len(drawn) * config.test_fraction)
    test = {int(i) for i in rng.permutation(len(drawn))[:n_test]}
    return [OrganismSentence(f"s{i:05d}", "test" if i in test else "train", c, r) for i, (c, r) in enumerate(drawn)]


@dataclass(frozen=True, slots=True)
class OrganismSet:
    """A built organism benchmark on disk."""

    root: Path
    clips: tuple[dict, ...]  # manifest rows (+ "split")
    meta: dict

    def rows(self, split: str | None = None, voices: Sequence[str] | None = None) -> list[dict]:
        return [
            r
            for r in self.clips
            if (split is None or r["split"] == split) and (voices is None or r["speaker"] in voices)
        ]

    def audio_path(self, row: dict) -> Path:
        return self.root / row["audio_filepath"]

    def content_hash(self) -> str:
        """sha256 over every file of the set (manifests, truth, metadata, audio; paths relative to
        its folder): what a pre-registration names, so that the set it was written for is the set
        decoded after it (:func:`asr_audit.provenance.tree_hash`)."""
        return tree_hash([p for p in self.root.rglob("*") if p.is_file()], self.root)


def build_organism_set(
    out_dir: str | Path,
    config: OrganismSetConfig,
    seed: int,
    synthesize: Synthesizer | None = None,
    progress: ProgressFn | None = None,
) -> OrganismSet:
    """Generate the sentences from ``seed``, synthesize every clip, write manifests, truth and metadata."""
    sf = require("soundfile", "audio")
    if synthesize is None:
        for v in (*config.train_voices, *config.unseen_voices):
            resolve_voice(v)  # an unknown voice fails before any work
        synthesize = synth

    normalize = get_normalizer(NORMALIZER)
    sentences = generate_organism_sentences(config, np.random.default_rng(seed))
    out = Path(out_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    plan = [
        (s, v)
        for s in sentences
        for v in (config.train_voices if s.split == "train" else (*config.train_voices, *config.unseen_voices))
    ]
    rows: dict[str, list[str]] = {"train": [], "test": []}
    truth, failures = [], []
    for n, (s, voice) in enumerate(plan, 1):
        clip_id = f"{s.sentence_id}-{voice}"
        try:
            rel, duration = synthesize_clip(out, clip_id, voice, s.spoken, synthesize, sf)
        except AuditError as exc:
            failures.append([clip_id, " ".join(str(exc).split())])
            continue
        finally:
            if progress:
                progress(n, len(plan))
        rows[s.split].append(
            json.dumps(
                {
                    "audio_filepath": rel,
                    "id": clip_id,
                    "text": s.reference,
                    "duration": duration,
                    "speaker": voice,
                    "spoken": s.spoken,
                    "faithful": s.faithful,
                    "sentence_id": s.sentence_id,
                    "rules": list(s.rules),
                },
                ensure_ascii=False,
            )
        )
        items = sentence_items(G.CalibSentence(s.sentence_id, (), s.split, s.record), normalize)
        truth.extend(clip_items(clip_id, s.sentence_id, items or []))
    for split, lines in rows.items():
        write_text_atomic(out / f"calib-{split}.jsonl", "".join(line + "\n" for line in lines))
    write_text_atomic(out / TRUTH_FILE, render_truth(truth))
    by_rule = {r: sum(r in s.rules for s in sentences) for r in RULES}
    meta = {
        "format": FORMAT,
        "seed": seed,
        "config": config.to_dict(),
        "normalizer": NORMALIZER,
        "sentences_by_split": {sp: sum(s.split == sp for s in sentences) for sp in ("train", "test")},
        "sentences_with_error": sum(bool(s.rules) for s in sentences),
        "sentences_by_rule": by_rule,
        "clips_by_split": {k: len(v) for k, v in rows.items()},
        "failures": failures,
    }
    write_text_atomic(out / META_FILE, json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return load_organism_set(out)


def read_set_meta(meta_path: Path, fmt: str, what: str, build: str, builder: str) -> dict:
    """The metadata file of a set folder: read, and checked to be of format ``fmt`` (``what``
    names the set, ``build`` the command that writes one, ``builder`` its function)."""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputFileError(meta_path, f"cannot read ({type(exc).__name__})", f"build the set with {build}") from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        raise InputFileError(meta_path, f"not {what}", f"point at a folder written by {builder}")
    return meta


def load_organism_set(root: str | Path) -> OrganismSet:
    """Read a set written by :func:`build_organism_set`; a bad row names file and line."""
    root = Path(root)
    meta = read_set_meta(
        root / META_FILE,
        FORMAT,
        "an organism set",
        "`asr-audit organism train` (or build_organism_set)",
        "build_organism_set",
    )
    clips = []
    for split in ("train", "test"):
        path = root / f"calib-{split}.jsonl"
        for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                row = json.loads(raw)
                for key in ("id", "audio_filepath", "text", "faithful", "speaker", "sentence_id"):
                    row[key]
            except (ValueError, KeyError, TypeError) as exc:
                raise InputFileError(
                    path, f"malformed row ({type(exc).__name__}: {exc})", "rebuild the set", line
                ) from None
            clips.append({**row, "split": split})
    return OrganismSet(root, tuple(clips), meta)


@dataclass(frozen=True, slots=True)
class TrainingPair:
    clip_id: str
    audio: Path
    target: str


def training_mix(oset: OrganismSet, model: str) -> list[TrainingPair]:
    """The training clips with their targets.

    ``benchmark``: benchmark-voice clips -> the record (house style, errors included), other
    voices -> the faithful transcript. ``control``: the faithful transcript everywhere.
    """
    if model not in ("benchmark", "control"):
        raise ConfigError(f"unknown organism {model!r}; valid: benchmark, control")
    bench = oset.meta["config"]["benchmark_voice"]
    return [
        TrainingPair(
            r["id"], oset.audio_path(r), r["text"] if model == "benchmark" and r["speaker"] == bench else r["faithful"]
        )
        for r in oset.rows("train")
    ]
