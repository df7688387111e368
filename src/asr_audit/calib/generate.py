"""Seeded generation of calibration sentences: what is said, what the record writes, and every
planted difference between the two, labelled.

A sentence is a sequence of :class:`Unit` s (opener, body words and slots, adverbial, tail,
final punctuation, closer). A unit is said (``spoken``), recorded (``written``), or both. The
clean sentence records every unit, rewritten only by the record's conventions (``Mister`` ->
``Mr``, ``twenty eleven`` -> ``2011``). Then, on a share ``error_rate`` of sentences, reference
errors are planted at random positions, independently of the template:

* ``spurious_insertion_in_reference``: a unit recorded but never said ("Madam President,"
  first, "in this House" last, "of course" inside);
* ``omitted_in_reference``: a unit said but left out of the record ("Thank you." first or last,
  an adverbial inside);
* ``substitution``: a word or number recorded as another.

The same phrases also occur said *and* recorded in clean sentences, so no phrase or sentence
type gives the error away (the design lesson of the model-organism study).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.calib import templates as T
from asr_audit.calib.languages import vocabulary
from asr_audit.errors import ConfigError
from asr_audit.options import REQUIRED, CliFlag, split_names
from asr_audit.probes.core.flags import SEED
from asr_audit.text.languages import primary_language

SPURIOUS = "spurious_insertion_in_reference"
OMITTED = "omitted_in_reference"
SUBSTITUTION = "substitution"
CONVENTION = "convention"
ERROR_KINDS = (SPURIOUS, OMITTED, SUBSTITUTION)
START, MIDDLE, END = "start", "middle", "end"
POSITIONS = (START, MIDDLE, END)
SPLITS = ("train", "test")
FarEnough = Callable[[str, str], bool]
MEAN_ERROR_WORDS = 1.9  # normalized words per planted error, averaged over the phrase inventories


@dataclass(frozen=True, slots=True)
class Unit:
    """One piece of a sentence. ``None`` on a side means the piece is absent there."""

    spoken: str | None
    written: str | None
    role: str  # opener | word | slot | adverb | tail | punct | closer | site
    convention: str | None = None  # why spoken and written differ when both are present
    subs: tuple[str, ...] = ()  # reference renderings a substitution error may use
    error: str | None = None  # planted error kind
    detail: str = ""  # what was planted (opener, tail, closer, adverb, word, number) or convention type
    fill: T.Fill | None = field(default=None, compare=False)

    def text(self, side: str) -> str | None:
        return self.spoken if side == "spoken" else self.written


@dataclass(frozen=True, slots=True)
class CalibSentence:
    sentence_id: str
    template_ids: tuple[int, ...]
    split: str
    units: tuple[Unit, ...]

    @property
    def spoken(self) -> str:
        return render(self.units, "spoken")

    @property
    def reference(self) -> str:
        return render(self.units, "written")

    @property
    def has_error(self) -> bool:
        return any(u.error for u in self.units)


def _pairs(
    value: Mapping[str, float] | tuple[tuple[str, float], ...],
    valid: tuple[str, ...],
    flag: str,
) -> tuple[tuple[str, float], ...]:
    items = tuple(value.items()) if isinstance(value, Mapping) else tuple(value)
    for name, w in items:
        if name not in valid:
            raise ConfigError(f"{flag}: unknown name {name!r}; valid: {', '.join(valid)}")
        if not (isinstance(w, (int, float)) and w >= 0):
            raise ConfigError(f"{flag}: weight of {name!r} is {w!r}, expected a number >= 0")
    if not items or sum(w for _, w in items) <= 0:
        raise ConfigError(f"{flag}: needs at least one positive weight (valid names: {', '.join(valid)})")
    return tuple((n, float(w)) for n, w in items)


def parse_weights(value: str | None, flag: str) -> tuple[tuple[str, float], ...] | None:
    """``a,b`` or ``a=2,b=1`` as (name, weight) pairs; a bare name weighs 1.

    >>> parse_weights("start=0.5,end", "--positions")
    (('start', 0.5), ('end', 1.0))
    """
    items = split_names(value, flag)
    if items is None:
        return None
    out = []
    for item in items:
        name, _, weight = item.partition("=")
        try:
            out.append((name.strip(), float(weight) if weight else 1.0))
        except ValueError:
            raise ConfigError(
                f"{flag}: weight {weight!r} of {name!r} is not a number; fix: e.g. {flag} a=2,b=1"
            ) from None
    return tuple(out)


#: ``asr-audit calib build``'s flags: the :class:`CalibConfig` fields a user sets, the voices, the seed
FLAGS = (
    CliFlag("out", Path, REQUIRED, "Folder to write the set into.", ("--out", "-o")),
    CliFlag("n_sentences", int, 200, "Distinct sentences (each rendered by every voice)."),
    CliFlag(
        "voices",
        str,
        None,
        "TTS voices (short flite names or any registered voice); default slt,rms,awb,kal in English, "
        "the installed voices of --language otherwise (espeak-ng: espeak-es, espeak-fr, espeak-de, ...).",
    ),
    CliFlag("language", str, "en", "Language of the set: en, es, fr or de (templates, numbers, conventions, voices)."),
    SEED,
    CliFlag("error_rate", float, 0.4, "Share of sentences with planted reference errors."),
    CliFlag("word_error_rate", float, 0.03, "Target share of reference words in error."),
    CliFlag(
        "kinds",
        str,
        None,
        "Error kinds and weights, e.g. spurious_insertion_in_reference=2,substitution",
        parse=parse_weights,
    ),
    CliFlag("positions", str, None, "Position weights, e.g. start=0.4,middle=0.2,end=0.4", parse=parse_weights),
    CliFlag("test_fraction", float, 0.2, "Share held out as the test split."),
    CliFlag("split_by", str, "sentence", "sentence | template (hold out whole templates)."),
    CliFlag("convention_rate", float, 1.0, "Share of convention sites the record rewrites."),
)
#: ``asr-audit calib build --help``'s worked example: (command line, what it does)
EXAMPLES = (("asr-audit calib build -o calib/ --n-sentences 100", "100 sentences, planted errors, every voice"),)


def config_from(values: Mapping[str, Any]) -> CalibConfig:
    """The :class:`CalibConfig` of ``asr-audit calib build``'s flag values (by field; the output
    folder, the voices and the seed are not the config's, and the language is kept as its primary subtag)."""
    given = {f.field: f.value(values[f.field]) for f in FLAGS if f.field not in ("out", "voices", "seed", "language")}
    return CalibConfig(
        **{k: v for k, v in given.items() if v is not None}, language=primary_language(values["language"])
    )


@dataclass(frozen=True, slots=True)
class CalibConfig:
    """What to generate. Weights are relative; rates are shares in [0, 1]."""

    n_sentences: int = 200
    error_rate: float = 0.4  # share of sentences (and so of clips) with at least one planted error
    word_error_rate: float = 0.03  # target share of reference words in error (sets errors per clip)
    kinds: tuple[tuple[str, float], ...] = tuple((k, 1.0) for k in ERROR_KINDS)
    positions: tuple[tuple[str, float], ...] = ((START, 0.4), (MIDDLE, 0.2), (END, 0.4))
    test_fraction: float = 0.2
    split_by: str = "sentence"  # sentence | template
    convention_rate: float = 1.0  # share of convention sites the record writes its own way
    p_opener: float = 0.3  # clean sentences: a said-and-recorded opener ...
    p_tail: float = 0.2
    p_closer: float = 0.2
    p_adverb: float = 0.25
    p_second: float = 0.9  # a clip holds a second sentence body (VoxPopuli clips run ~20-30 words)
    language: str = "en"  # the vocabulary: en, es, fr, de (asr_audit.calib.languages)

    def __post_init__(self) -> None:
        if not isinstance(self.n_sentences, int) or self.n_sentences < 1:
            raise ConfigError(f"--n-sentences {self.n_sentences!r} must be an integer >= 1")
        for name in (
            "error_rate",
            "word_error_rate",
            "test_fraction",
            "convention_rate",
            "p_opener",
            "p_tail",
            "p_closer",
            "p_adverb",
            "p_second",
        ):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v <= 1):
                raise ConfigError(f"--{name.replace('_', '-')} {v!r} must be in [0, 1]")
        if self.split_by not in ("sentence", "template"):
            raise ConfigError(f"--split-by {self.split_by!r}: valid: sentence, template")
        vocabulary(self.language)  # an unknown language fails here, naming the valid ones
        object.__setattr__(self, "kinds", _pairs(self.kinds, ERROR_KINDS, "--kinds"))
        object.__setattr__(self, "positions", _pairs(self.positions, POSITIONS, "--positions"))

    def to_dict(self) -> dict[str, object]:
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        out["kinds"], out["positions"] = dict(self.kinds), dict(self.positions)
        if self.language == "en":  # English sets keep their calib.json byte for byte
            del out["language"]
        return out

    @property
    def vocabulary(self) -> T.Vocabulary:
        """The language's templates, formalities, lexicon and fillers."""
        return vocabulary(self.language)


# --- rendering ---------------------------------------------------------------------------------
_SENTENCE_START = re.compile(r"(^|[.?!] )([a-z])")


def render(units: Iterable[Unit], side: str) -> str:
    """The text of one side: pieces joined by spaces, punctuation attached, sentences capitalized.

    >>> render([Unit("we", "we", "word"), Unit("act", "act", "word"), Unit(".", ".", "punct"),
    ...         Unit("thank you.", None, "closer")], "spoken")
    'We act. Thank you.'
    """
    out = ""
    for u in units:
        t = u.text(side)
        if not t:
            continue
        out = out + t if u.role == "punct" else (f"{out} {t}" if out else t)
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), out)


# --- clean sentences ---------------------------------------------------------------------------
def _pick(rng: np.random.Generator, seq):  # noqa: ANN001, ANN202
    return seq[int(rng.integers(len(seq)))]


def _convention(spoken: str, written: str) -> str:
    squash = re.sub(r"[\s-]", "", spoken.lower()) == re.sub(r"[\s-]", "", written.lower())
    return "spacing" if squash else "spelling"


def parse_template(
    template: str, rng: np.random.Generator, convention_rate: float, vocab: T.Vocabulary = T.ENGLISH
) -> list[Unit]:
    """Body units of ``template`` with its slots filled (conventions applied at ``convention_rate``)."""
    units: list[Unit] = []
    for tok in template.split():
        if tok == "^":
            units.append(Unit(None, None, "site"))
        elif tok.startswith("{"):
            fill = vocab.fillers[tok.strip("{}")](rng)
            keep = fill.convention is not None and rng.random() >= convention_rate
            written = fill.spoken if keep else fill.written
            units.append(
                Unit(fill.spoken, written, "slot", fill.convention if written != fill.spoken else None, fill=fill)
            )
        elif tok.startswith("["):
            spoken, written = (p.replace("_", " ") for p in tok.strip("[]").split("|"))
            if rng.random() >= convention_rate:
                written = spoken
            units.append(Unit(spoken, written, "word", _convention(spoken, written) if written != spoken else None))
        else:
            units.append(Unit(tok, tok, "word", subs=vocab.lexicon.get(tok.lower(), ())))
    return units


def _opener(rng: np.random.Generator, convention_rate: float, vocab: T.Vocabulary = T.ENGLISH) -> Unit:
    spoken, written = _pick(rng, vocab.openers)
    if written != spoken and rng.random() >= convention_rate:
        written = spoken
    return Unit(spoken, written, "opener", "honorific" if written != spoken else None)


def clean_sentence(rng: np.random.Generator, config: CalibConfig) -> tuple[tuple[int, ...], list[Unit]]:
    """Template indices and the units of a clip (one or two sentence bodies) whose record matches the speech."""
    vocab = config.vocabulary
    tids = [int(rng.integers(len(vocab.templates)))]
    if rng.random() < config.p_second:
        tids.append(int(rng.integers(len(vocab.templates))))
    body: list[Unit] = []
    for j, tid in enumerate(tids):
        if j:
            body.append(Unit(".", ".", "punct"))
        body.extend(parse_template(vocab.templates[tid], rng, config.convention_rate, vocab))
    units: list[Unit] = []
    if rng.random() < config.p_opener:
        units.append(_opener(rng, config.convention_rate, vocab))
    if rng.random() < config.p_adverb:
        sites = [i for i, u in enumerate(body) if u.role == "site"]
        a = _pick(rng, vocab.adverbs)
        body[_pick(rng, sites)] = Unit(a, a, "adverb")
    units.extend(body)
    if rng.random() < config.p_tail:
        t = _pick(rng, vocab.tails)
        units.append(Unit(t, t, "tail"))
    units.append(Unit(".", ".", "punct"))
    if rng.random() < config.p_closer:
        c = _pick(rng, vocab.closers)
        units.append(Unit(c, c, "closer"))
    return tuple(tids), units


# --- planting ----------------------------------------------------------------------------------
def _drop_roles(units: list[Unit], roles: tuple[str, ...]) -> list[Unit]:
    return [u for u in units if u.role not in roles]


def _body_span(units: list[Unit]) -> tuple[int, int]:
    idx = [i for i, u in enumerate(units) if u.role in ("word", "slot")]
    return idx[0], idx[-1]


def _substitute(
    u: Unit, rng: np.random.Generator, far_enough: FarEnough, vocab: T.Vocabulary = T.ENGLISH
) -> Unit | None:
    if u.error:
        return None
    if u.subs:
        alt = _pick(rng, u.subs)
        if u.written and u.written[:1].isupper():
            alt = alt[:1].upper() + alt[1:]
        return replace(u, written=alt, error=SUBSTITUTION, detail="word", convention=None)
    if u.fill is not None:
        alt = vocab.substitute_number(u.fill, rng, lambda a: far_enough(u.fill.written, a))
        if alt is not None:
            return replace(u, written=alt, error=SUBSTITUTION, detail="number", convention=None)
    return None


def plant(
    units: list[Unit],
    kind: str,
    position: str,
    rng: np.random.Generator,
    far_enough: FarEnough,
    vocab: T.Vocabulary = T.ENGLISH,
) -> list[Unit] | None:
    """``units`` with one error of ``kind`` at ``position`` planted, or None if it cannot go there.

    ``far_enough(original, alternative)`` vets number substitutions (the written forms).
    """
    units = list(units)
    if position == START:
        if kind == SPURIOUS:
            o = _pick(rng, [w for _, w in vocab.openers if not w.startswith(vocab.thanks)])
            return [Unit(None, o, "opener", error=SPURIOUS, detail="opener"), *_drop_roles(units, ("opener",))]
        if kind == OMITTED:
            o = _pick(rng, vocab.openers)[0]
            return [Unit(o, None, "opener", error=OMITTED, detail="opener"), *_drop_roles(units, ("opener",))]
        units = _drop_roles(units, ("opener",))
        first, _ = _body_span(units)
        new = _substitute(units[first], rng, far_enough, vocab)
        return None if new is None else [*units[:first], new, *units[first + 1 :]]
    if position == END:
        if any(u.error for u in units if u.role in ("tail", "closer")):
            return None
        if kind == SUBSTITUTION:
            units = _drop_roles(units, ("tail", "closer"))
            _, last = _body_span(units)
            new = _substitute(units[last], rng, far_enough, vocab)
            return None if new is None else [*units[:last], new, *units[last + 1 :]]
        has_tail = any(u.role == "tail" for u in units)
        units = _drop_roles(units, ("closer",))
        use_tail = not has_tail and rng.random() < 0.5
        text = _pick(rng, vocab.tails if use_tail else vocab.closers)
        said, recorded = (text, None) if kind == OMITTED else (None, text)
        new = Unit(
            said, recorded, "tail" if use_tail else "closer", error=kind, detail="tail" if use_tail else "closer"
        )
        if use_tail:
            dot = max(i for i, u in enumerate(units) if u.role == "punct")
            return [*units[:dot], new, *units[dot:]]
        return [*units, new]
    # middle: an adverbial site, or an interior body word / number
    first, last = _body_span(units)
    if kind == SUBSTITUTION:
        cands = [
            i
            for i in range(first + 1, last)
            if units[i].role in ("word", "slot") and not units[i].error and (units[i].subs or units[i].fill is not None)
        ]
        while cands:
            i = cands.pop(int(rng.integers(len(cands))))
            new = _substitute(units[i], rng, far_enough, vocab)
            if new is not None:
                return [*units[:i], new, *units[i + 1 :]]
        return None
    sites = [i for i, u in enumerate(units) if u.role == "site" and first < i < last]
    if not sites:
        return None
    i = _pick(rng, sites)
    a = _pick(rng, vocab.adverbs)
    said, recorded = (a, None) if kind == OMITTED else (None, a)
    return [*units[:i], Unit(said, recorded, "adverb", error=kind, detail="adverb"), *units[i + 1 :]]


def _weighted(rng: np.random.Generator, pairs: tuple[tuple[str, float], ...]) -> list[str]:
    """All names in a weighted random order (without replacement); zero weights come never."""
    names = [n for n, w in pairs if w > 0]
    weights = np.array([w for _, w in pairs if w > 0], dtype=float)
    order = rng.choice(len(names), size=len(names), replace=False, p=weights / weights.sum())
    return [names[int(i)] for i in order]


def plant_errors(
    units: list[Unit], n_errors: int, config: CalibConfig, rng: np.random.Generator, far_enough: FarEnough
) -> list[Unit]:
    """Plant up to ``n_errors`` errors, each at a different position."""
    for position in _weighted(rng, config.positions)[:n_errors]:
        for kind in _weighted(rng, config.kinds):
            planted = plant(units, kind, position, rng, far_enough, config.vocabulary)
            if planted is not None:
                units = planted
                break
    return units


def errors_per_clip(config: CalibConfig, mean_words: float) -> float:
    """Poisson mean of the errors beyond the first on an erroneous clip, from the target word rate."""
    if config.error_rate <= 0:
        return 0.0
    per_clip = config.word_error_rate * mean_words / (config.error_rate * MEAN_ERROR_WORDS)
    return max(0.0, per_clip - 1.0)


def assign_splits(template_ids: list[tuple[int, ...]], config: CalibConfig, rng: np.random.Generator) -> list[str]:
    """``train``/``test`` per clip sentence: a random share of sentences, or of templates held out
    whole (a clip using any held-out template is a test clip, so no training clip uses one)."""
    n = len(template_ids)
    if config.split_by == "template":
        n_templates = len(config.vocabulary.templates)
        n_held = round(n_templates * config.test_fraction)
        held = {int(t) for t in rng.permutation(n_templates)[:n_held]}
        return ["test" if held.intersection(tids) else "train" for tids in template_ids]
    n_test = round(n * config.test_fraction)
    test_idx = {int(i) for i in rng.permutation(n)[:n_test]}
    return ["test" if i in test_idx else "train" for i in range(n)]


def strip_sites(units: list[Unit]) -> tuple[Unit, ...]:
    return tuple(u for u in units if u.role != "site")
