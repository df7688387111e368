"""Seeded synthetic prediction sets with planted reference errors and known model behaviour.

A clip is a Parliament-style sentence or two, filled from templates and a small vocabulary
(names with diacritics, numbers as words or digits, British spellings, contractions, casing
and punctuation), so the normalizer has real work to do. What the speaker *said* and what
the reference *writes* differ by planted reference errors:

* ``spurious_opener`` / ``spurious_closer``: the reference adds words nobody said
  ("Madam President,", "in this House.");
* ``omitted_opener`` / ``omitted_closer``: the speaker said words the reference leaves out
  ("Thank you.");
* ``substitution``: the reference writes another word (at the start, the end, or inside).

Honest models transcribe the spoken text with their own style (casing, punctuation, American
spelling, digits, expanded contractions, hesitations) and independent small error rates (word
drops, substitutions). Reference-copying models do the same, except that on a configurable
share of the planted errors they reproduce the reference. Files are written in the Open ASR
Leaderboard's JSONL layout (``audio_filepath``, ``text``, ``pred_text``), one per model.

Everything is drawn from the ``numpy.random.Generator`` passed in: the same seed gives
byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SPURIOUS_OPENER, SPURIOUS_CLOSER = "spurious_opener", "spurious_closer"
OMITTED_OPENER, OMITTED_CLOSER = "omitted_opener", "omitted_closer"
SUBSTITUTION = "substitution"
START, MIDDLE, END = "start", "middle", "end"

# About one sentence in five carries a number, so that a clip has one about as often as a
# VoxPopuli clip (15-25 % of them): digits and number words send the normalizer's number
# step down its slow path.
TEMPLATES: tuple[str, ...] = (
    "I would like to thank the rapporteur, {title} {name}, for the excellent work on the {topic}.",
    "We voted in favour of this report, although we have serious doubts about the {topic}.",
    "{title} {name}, the citizens of Europe are waiting for an answer on the {topic}.",
    "This is a question of {value}, and the {inst} cannot ignore it any longer.",
    "It's not acceptable that the {inst} still refuses to recognise the {topic}.",
    "I'd like to ask {title} {name} whether the {inst} will support the {topic}.",
    "Colleagues, we don't need more words, we need a real commitment to {value}.",
    "The {inst} has promised us a strategy, but where is the money for the {topic}?",
    "We're not asking for charity, we are asking for {value} and for respect.",
    "The report by {title} {name} shows that the {topic} has failed our regions.",
    "My group supports the compromise, because it strengthens the {topic}.",
    "The {inst} should listen to the people who will pay for the {topic}.",
    "I cannot support a text that weakens {value} in the name of the {topic}.",
    "Let us be honest: the {topic} was never properly funded by the {inst}.",
    "We need clear rules, effective controls and real sanctions for the {topic}.",
    "The {inst} must explain why the {topic} has been delayed again and again.",
    "Small businesses and farmers are the first victims of the {topic}.",
    "This House has a duty to defend {value} and the dignity of every citizen.",
    "I welcome the statement of {title} {name} on the {topic}.",
    "It is time for the {inst} to take responsibility for the {topic}.",
    "Our citizens expect results, not another debate about the {topic}.",
    "We don't accept that {value} can be negotiated behind closed doors.",
    "The {inst} must act now, because {num} Member States have still not implemented the {topic}.",
    "In {year} the {inst} promised more funding for the {topic}, and that promise has not been kept.",
    "Let me recall that {num} million people are unemployed in the European Union today.",
    "I therefore call on the {inst} to present a proposal on the {topic} before the end of {year}.",
    "My group will table {num} amendments, because the {inst} has ignored the {topic}.",
)
TITLES = ("Mr", "Mrs", "Ms", "Commissioner", "Dr")
NAMES = (
    "Schulz",
    "Barroso",
    "Juncker",
    "Verhofstadt",
    "Swoboda",
    "Gräßle",
    "Ó Neachtain",
    "Kaczmarek",
    "Van Rompuy",
    "Ashton",
    "Reding",
    "Šefčovič",
    "Buzek",
    "De Gucht",
    "Müller",
)
TOPICS = (
    "harmonisation of the internal market",
    "labour market programme",
    "common fisheries policy",
    "defence cooperation",
    "organisation of the agricultural markets",
    "energy centre in the east",
    "behaviour of the credit rating agencies",
    "European neighbourhood policy",
    "youth guarantee programme",
    "protection of the Danube basin",
    "roaming regulation",
    "tobacco products directive",
)
INSTITUTIONS = ("Commission", "Council", "Presidency", "European Central Bank", "High Representative")
VALUES = ("solidarity", "democracy", "the rule of law", "transparency", "competitiveness", "fairness")
YEARS = ("2009", "2013", "2014", "2020")
NUMBERS: tuple[tuple[str, str], ...] = (
    ("three", "3"),
    ("five", "5"),
    ("twelve", "12"),
    ("fifteen", "15"),
    ("twenty-seven", "27"),
    ("forty", "40"),
    ("one hundred and fifty", "150"),
)
SPELLINGS = {
    "harmonisation": "harmonization",
    "labour": "labor",
    "programme": "program",
    "centre": "center",
    "defence": "defense",
    "organisation": "organization",
    "behaviour": "behavior",
    "neighbourhood": "neighborhood",
    "favour": "favor",
    "recognise": "recognize",
}
CONTRACTIONS = {"it's": "it is", "we're": "we are", "don't": "do not", "i'd": "i would"}
SPURIOUS_OPENERS = (
    "Madam President,",
    "Mr President,",
    "Mr President, ladies and gentlemen,",
    "Ladies and gentlemen,",
    "Madam President, Commissioner,",
)
SPURIOUS_CLOSERS = ("in this House.", "in this Chamber.", "Thank you very much.", "I thank you for your attention.")
SPOKEN_OPENERS = ("Thank you.", "Thank you, Madam President.", "Yes, thank you.", "Well,", "Good morning.")
SPOKEN_CLOSERS = ("Thank you.", "Thank you very much.", "Thank you, Madam President.", "That is all.")
WRITTEN_SUBSTITUTES = ("Tomorrow", "Colleagues", "budget", "treaty", "agenda", "region", "sector", "mandate")
CONFUSIONS = (
    "the",
    "a",
    "and",
    "of",
    "this",
    "that",
    "in",
    "on",
    "for",
    "report",
    "policy",
    "market",
    "commission",
    "counsel",
    "states",
    "union",
    "union's",
    "people",
    "there",
    "their",
)
FILLERS = ("uh,", "um", "uh", "hmm,")
_PUNCT = ",.;:?!"
_NUMBER_TO_DIGITS = dict(NUMBERS)
_DIGITS_TO_NUMBER = {d: w for w, d in NUMBERS}


@dataclass(frozen=True, slots=True)
class PlantedError:
    """One reference error planted in a clip, and the copying models that reproduced it."""

    clip_id: str
    kind: str  # spurious_opener | spurious_closer | omitted_opener | omitted_closer | substitution
    position: str  # start | middle | end
    spoken: str  # what was said at the span ("" when the reference adds words)
    written: str  # what the reference writes there ("" when it omits spoken words)
    copied_by: tuple[str, ...]

    @property
    def legacy_kind(self) -> str:
        """The public code's kind of the edit that should find it: ``insert`` or ``delete``."""
        return "insert" if self.kind in (OMITTED_OPENER, OMITTED_CLOSER) else "delete"

    def to_dict(self) -> dict[str, object]:
        return {
            "clip_id": self.clip_id,
            "kind": self.kind,
            "position": self.position,
            "spoken": self.spoken,
            "written": self.written,
            "copied_by": list(self.copied_by),
        }


@dataclass(frozen=True, slots=True)
class ModelStyle:
    """How one synthetic model writes: surface style plus its own error rates."""

    lowercase: bool
    punctuation: bool
    american: bool
    digits: bool | None  # True: numbers as digits, False: as words, None: as the reference
    expand: bool  # expand contractions
    title_period: bool  # "Mr." instead of "Mr"
    p_drop: float
    p_sub: float
    p_filler: float
    copy_share: float = 0.0  # share of planted errors on which it writes the reference


@dataclass(frozen=True, slots=True)
class SyntheticSet:
    """What :func:`make_prediction_set` wrote, with the ground truth to check probes against."""

    folder: Path
    models: tuple[str, ...]
    honest: tuple[str, ...]
    copying: Mapping[str, float]  # copying model -> share of planted errors it copies
    clip_ids: tuple[str, ...]
    spoken: Mapping[str, str]  # clip id -> what was said
    planted: tuple[PlantedError, ...]
    styles: Mapping[str, ModelStyle] = field(default_factory=dict)

    def panel(self, size: int = 4) -> list[str]:
        """The first ``size`` honest models, a natural consensus panel."""
        return list(self.honest[:size])

    def boundary_errors(self) -> list[PlantedError]:
        return [p for p in self.planted if p.position != MIDDLE]

    def to_dict(self) -> dict[str, object]:
        return {
            "folder": str(self.folder),
            "models": list(self.models),
            "honest": list(self.honest),
            "copying": dict(self.copying),
            "n_clips": len(self.clip_ids),
            "planted": [p.to_dict() for p in self.planted],
        }


@dataclass(frozen=True, slots=True)
class _Part:
    spoken: tuple[str, ...]
    written: tuple[str, ...]
    planted: int | None = None  # index into the clip's planted errors


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


def _body(rng: np.random.Generator) -> tuple[str, ...]:
    as_digits = bool(rng.random() < 0.3)
    sentences = []
    for _ in range(1 if rng.random() < 0.6 else 2):
        words, digits = NUMBERS[int(rng.integers(len(NUMBERS)))]
        sentences.append(
            _pick(rng, TEMPLATES).format(
                title=_pick(rng, TITLES),
                name=_pick(rng, NAMES),
                topic=_pick(rng, TOPICS),
                inst=_pick(rng, INSTITUTIONS),
                value=_pick(rng, VALUES),
                year=_pick(rng, YEARS),
                num=digits if as_digits else words,
            )
        )
    return tuple(" ".join(sentences).split())


def _substitute(rng: np.random.Generator, token: str) -> str:
    core = token.rstrip(_PUNCT)
    while True:
        word = _pick(rng, WRITTEN_SUBSTITUTES)
        if word.lower() != core.lower():
            return word + token[len(core) :]


def _plant(
    rng: np.random.Generator, body: tuple[str, ...], rates: tuple[float, float, float]
) -> tuple[list[_Part], list[tuple[str, str]]]:
    """Split a clip into parts; planted parts differ between spoken and written text."""
    start_rate, end_rate, middle_rate = rates
    kinds: list[tuple[str, str]] = []
    head: list[_Part] = []
    tail: list[_Part] = []
    mid = list(body)
    if rng.random() < start_rate:
        kind = (SPURIOUS_OPENER, OMITTED_OPENER, SUBSTITUTION)[int(rng.choice(3, p=(0.45, 0.35, 0.2)))]
        if kind == SPURIOUS_OPENER:
            if mid[0] != "I" and mid[0] not in TITLES:  # "Madam President, we voted ..."
                mid[0] = mid[0][:1].lower() + mid[0][1:]
            head.append(_Part((), tuple(_pick(rng, SPURIOUS_OPENERS).split()), len(kinds)))
        elif kind == OMITTED_OPENER:
            head.append(_Part(tuple(_pick(rng, SPOKEN_OPENERS).split()), (), len(kinds)))
        else:
            first = mid.pop(0)
            head.append(_Part((first,), (_substitute(rng, first),), len(kinds)))
        kinds.append((kind, START))
    if rng.random() < end_rate:
        kind = (SPURIOUS_CLOSER, OMITTED_CLOSER, SUBSTITUTION)[int(rng.choice(3, p=(0.45, 0.35, 0.2)))]
        if kind == SPURIOUS_CLOSER:
            tail.append(_Part((), tuple(_pick(rng, SPURIOUS_CLOSERS).split()), len(kinds)))
        elif kind == OMITTED_CLOSER:
            tail.append(_Part(tuple(_pick(rng, SPOKEN_CLOSERS).split()), (), len(kinds)))
        else:
            last = mid.pop()
            tail.append(_Part((last,), (_substitute(rng, last),), len(kinds)))
        kinds.append((kind, END))
    parts: list[_Part] = []
    content = [i for i in range(2, len(mid) - 2) if len(mid[i].rstrip(_PUNCT)) > 3]
    if content and rng.random() < middle_rate:
        i = content[int(rng.integers(len(content)))]
        parts = [
            _Part(tuple(mid[:i]), tuple(mid[:i])),
            _Part((mid[i],), (_substitute(rng, mid[i]),), len(kinds)),
            _Part(tuple(mid[i + 1 :]), tuple(mid[i + 1 :])),
        ]
        kinds.append((SUBSTITUTION, MIDDLE))
    else:
        parts = [_Part(tuple(mid), tuple(mid))]
    if tail and tail[0].written and tail[0].written[0][0].islower() and parts[-1].written:
        # a continuation closer ("in this House.") takes over the sentence's full stop
        closer = parts[-1]
        parts[-1] = _Part(closer.spoken, (*closer.written[:-1], closer.written[-1].rstrip(".")), closer.planted)
    return head + parts + tail, kinds


def _case_like(word: str, original: str) -> str:
    """``word`` capitalized when ``original`` is."""
    return word[:1].upper() + word[1:] if original[:1].isupper() else word


def _render(rng: np.random.Generator, words: Sequence[str], style: ModelStyle) -> str:
    """A model's transcript of ``words`` in its style, with its own independent errors."""
    draws = rng.random((len(words), 4))
    out: list[str] = []
    for token, (u_drop, u_sub, u_fill, u_pick) in zip(words, draws):
        if u_drop < style.p_drop:
            continue
        if u_fill < style.p_filler:
            out.append(FILLERS[int(u_pick * len(FILLERS))])
        core = token.rstrip(_PUNCT)
        punct = token[len(core) :]
        low = core.lower()
        if u_sub < style.p_sub:
            core = CONFUSIONS[int(u_pick * len(CONFUSIONS))]
        elif style.american and low in SPELLINGS:
            core = _case_like(SPELLINGS[low], core)
        elif style.expand and low in CONTRACTIONS:
            core = _case_like(CONTRACTIONS[low], core)
        elif style.digits is True and low in _NUMBER_TO_DIGITS:
            core = _NUMBER_TO_DIGITS[low]
        elif style.digits is False and core in _DIGITS_TO_NUMBER:
            core = _DIGITS_TO_NUMBER[core]
        elif style.title_period and core in ("Mr", "Mrs", "Ms", "Dr"):
            core += "."
        out.append(core + punct)
    text = " ".join(out)
    if style.lowercase:
        text = text.lower()
    if not style.punctuation:
        text = " ".join(t for t in (w.strip(_PUNCT) for w in text.split()) if t)
    return text


def _style(rng: np.random.Generator, error_range: tuple[float, float], copy_share: float = 0.0) -> ModelStyle:
    lo, hi = error_range
    flags = rng.random(6)
    return ModelStyle(
        lowercase=bool(flags[0] < 0.4),
        punctuation=bool(flags[1] < 0.6),
        american=bool(flags[2] < 0.5),
        digits=(True, False, None)[int(flags[3] * 3)],
        expand=bool(flags[4] < 0.3),
        title_period=bool(flags[5] < 0.3),
        p_drop=float(rng.uniform(lo, hi)),
        p_sub=float(rng.uniform(lo, hi)),
        p_filler=float(rng.uniform(0.0, 0.02)),
        copy_share=copy_share,
    )


def make_prediction_set(
    n_clips: int,
    n_models: int = 10,
    *,
    rng: np.random.Generator,
    folder: str | Path,
    copy_shares: Sequence[float] = (0.9, 0.5),
    start_error_rate: float = 0.2,
    end_error_rate: float = 0.2,
    middle_error_rate: float = 0.05,
    honest_error_range: tuple[float, float] = (0.005, 0.03),
    missing_rate: float = 0.0,
    dataset: str = "synthetic",
) -> SyntheticSet:
    """Write ``n_models`` prediction files for ``n_clips`` synthetic clips into ``folder``.

    The last ``len(copy_shares)`` models copy the reference on that share of the planted errors;
    the others are honest. ``missing_rate`` is the chance that a model has no hypothesis
    (``null``) for a clip. Returns the ground truth as a :class:`SyntheticSet`.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     s = make_prediction_set(5, 3, rng=np.random.default_rng(0), folder=d, copy_shares=(1.0,))
    >>> s.honest, dict(s.copying)
    (('honest-01', 'honest-02'), {'copier-01': 1.0})
    """
    if n_clips < 1 or n_models < 1:
        raise ValueError(f"need at least one clip and one model, got {n_clips} clips and {n_models} models")
    if len(copy_shares) > n_models:
        raise ValueError(f"{len(copy_shares)} copying models do not fit in {n_models} models")
    if any(not 0 <= s <= 1 for s in copy_shares):
        raise ValueError(f"copy shares must be in [0, 1], got {list(copy_shares)}")
    n_honest = n_models - len(copy_shares)
    honest = tuple(f"honest-{k + 1:02d}" for k in range(n_honest))
    copiers = tuple(f"copier-{k + 1:02d}" for k in range(len(copy_shares)))
    models = honest + copiers
    styles = {m: _style(rng, honest_error_range) for m in honest}
    styles.update({m: _style(rng, honest_error_range, s) for m, s in zip(copiers, copy_shares)})
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = {m: [] for m in models}
    clip_ids, spoken_text, planted = [], {}, []
    rates = (start_error_rate, end_error_rate, middle_error_rate)
    for c in range(n_clips):
        clip_id = f"{dataset}/clip-{c + 1:06d}.wav"
        parts, kinds = _plant(rng, _body(rng), rates)
        spoken = [w for p in parts for w in p.spoken]
        reference = " ".join(w for p in parts for w in p.written)
        copied: list[list[str]] = [[] for _ in kinds]
        for m in models:
            share = styles[m].copy_share
            copies = {i for i in range(len(kinds)) if share > 0 and rng.random() < share}
            for i in copies:
                copied[i].append(m)
            words = [w for p in parts for w in (p.written if p.planted in copies else p.spoken)]
            hyp = None if missing_rate and rng.random() < missing_rate else _render(rng, words, styles[m])
            row = {
                "audio_filepath": clip_id,
                "duration": round(0.38 * len(spoken), 2),
                "text": reference,
                "pred_text": hyp,
            }
            lines[m].append(json.dumps(row, ensure_ascii=False))
        for i, (kind, position) in enumerate(kinds):
            part = next(p for p in parts if p.planted == i)
            planted.append(
                PlantedError(clip_id, kind, position, " ".join(part.spoken), " ".join(part.written), tuple(copied[i]))
            )
        clip_ids.append(clip_id)
        spoken_text[clip_id] = " ".join(spoken)
    for m in models:
        path = folder / f"MODEL_{m}_DATASET_{dataset}_test.jsonl"
        path.write_text("\n".join(lines[m]) + "\n", encoding="utf-8")
    return SyntheticSet(
        folder, models, honest, dict(zip(copiers, copy_shares)), tuple(clip_ids), spoken_text, tuple(planted), styles
    )
