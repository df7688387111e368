"""Orthographic switch rate: does a model follow the corpus's spelling of an acoustically identical form?

For each convention family (:mod:`asr_audit.probes.predfiles.conventions`) the clips are partitioned by the
arm their reference uses, and per model

    switch = min over arms a of P(model writes arm a | reference writes arm a).

A model with a fixed habit scores about 0, a coin flip at most 0.5; only a model that tracks the
corpus convention, which the audio cannot reveal, exceeds 0.5 (:data:`CHANCE`).

Item rule (matching runs on raw text; normalization would erase the distinction):

1. every occurrence of an arm in a raw reference (case-insensitive, word-bounded, with the
   family's context rules) is one *item*;
2. the reference and the hypothesis are tokenized (lower-cased words; hyphens and other
   punctuation split words, ``%`` is a token); every arm occurrence of the family in either
   (in the hypothesis: forms only, no context rules) is collapsed to one arm-blind placeholder
   token, and the two sequences are aligned by Levenshtein (``kaldialign``), so "Mr" aligns with
   "MISTER" and "today" with "to-day" whatever surrounds them;
3. an item whose placeholder aligns with a hypothesis placeholder takes that occurrence's arm:
   the reference's arm (``same``) or the other arm (``other``); aligned with another word or
   with nothing, the item is ``neither`` (a deletion or another word). ``neither`` and clips
   with no hypothesis (``missing``) are ineligible and are counted, not scored.

An arm with fewer than ``min_per_arm`` eligible items leaves the switch undefined (``None``, with
the reason). The limiting arm is the argmin (ties go to the arm with fewer items, then to arm
order). Items in one clip are treated as independent.

**Denominator** (``denominator``): ``eligible`` (default) scores an arm's items where the model
wrote one of the two arms (``neither`` left out, counted); ``paper`` is the paper's code, which
counts ``neither`` items as not the reference's arm (k / (same + other + neither)), so its rates
are lower or equal (issue 11 reports 0.80 vs 0.70 for one model). Clips with no hypothesis
(``missing``) are left out under both.

**Interval and "above chance"** (issue 11, defect 6): the switch is a minimum over arms, so the
limiting arm's own interval is not an interval of the minimum (at a true rate of 0.5 on every arm
it called the model "above chance" 11% of the time, not 2.5%). "Above chance" is an
intersection-union test: the minimum exceeds 0.5 only if *every* arm's exact one-sided binomial
test of ``rate <= 0.5`` rejects at ``ALPHA`` = 0.025 (an IUT keeps its level without correction;
``p_value`` = the largest arm p-value). Equivalently ``ci_low`` = the smallest arm's exact
(Clopper-Pearson) one-sided 97.5% lower bound, a valid lower bound for the minimum, and "above
chance" is ``ci_low > 0.5``. ``ci_high`` = the smallest arm's Clopper-Pearson upper bound at
0.025 / (number of arms) (Bonferroni), so [ci_low, ci_high] covers the minimum with probability
>= 95%.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.errors import ConfigError
from asr_audit.options import CliFlag, Reader, Surface, build, check, flag_table, split_names
from asr_audit.probes.core.flags import LANGUAGE, MODELS
from asr_audit.probes.core.probe import FunctionProbe, ProbeInputs, probe
from asr_audit.probes.predfiles.conventions import (
    NUMBER_GLUE,
    NUMBER_WORDS,
    ROLE_MEANING,
    ROLES,
    Family,
    available_families,
    available_groups,
    available_languages,
    families_for,
    resolve_families,
)
from asr_audit.stats.intervals import binom_tail_ge, clopper_pearson_lower, clopper_pearson_upper
from asr_audit.text.languages import primary_language

CHANCE = 0.5
ALPHA = 0.025  # one-sided level of "above chance" (the lower end of a two-sided 95% interval)
DEFAULT_MIN_PER_ARM = 5
STATUSES = ("same", "other", "neither", "missing")
DENOMINATORS = ("eligible", "paper")

_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*|%")
_TOKEN_CURRENCY = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*|%|€")  # non-English: the euro families' symbol
_DIGITS_AFTER = re.compile(r"\s*\d")
_DIGIT_BEFORE = re.compile(r"\d\s*$")
_WORDS_BEFORE = re.compile(r"([\w'\u2019]+)\W*$")
_NEXT_WORD = re.compile(r"\.?\s*([^\W\d_][\w'\u2019]*)")
_PREV_WORD = re.compile(r"([\w'\u2019]+)\W*$")
_FOLLOW_WORD = re.compile(r"\W*?([\w'\u2019]+)")
_EPS = "\x00"
_PLACEHOLDER = "\x01"


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One arm occurrence in a raw text: character span and arm index in its family."""

    start: int
    end: int
    arm: int
    text: str


@dataclass(frozen=True, slots=True)
class Token:
    """A lower-cased word of raw text with its character span (``arm`` set on placeholders)."""

    norm: str
    start: int
    end: int
    arm: int | None = None


@dataclass(frozen=True, slots=True)
class Item:
    """An arm occurrence in a reference: the unit the switch rate counts."""

    clip_id: str
    family: str
    ref_arm: int
    start: int
    end: int
    ref_text: str


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What one model wrote for one item."""

    model: str
    item: Item
    status: str  # one of STATUSES
    hyp_arm: int | None
    hyp_text: str

    def to_dict(self, families: Mapping[str, Family]) -> dict[str, object]:
        fam = families[self.item.family]
        return {
            "model": self.model,
            "clip_id": self.item.clip_id,
            "family": self.item.family,
            "ref_arm": fam.arms[self.item.ref_arm].label,
            "ref_text": self.item.ref_text,
            "ref_span": [self.item.start, self.item.end],
            "status": self.status,
            "hyp_arm": None if self.hyp_arm is None else fam.arms[self.hyp_arm].label,
            "hyp_text": self.hyp_text,
        }


@dataclass(frozen=True, slots=True)
class ArmCount:
    """k of n eligible items whose reference uses this arm were written with it by the model."""

    label: str
    role: str
    k: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class SwitchRow:
    """One model on one family (or on a pooled group, ``pooled=True``)."""

    model: str
    family: str
    group: str
    pooled: bool
    arms: tuple[ArmCount, ...]
    switch: float | None
    ci_low: float | None
    ci_high: float | None
    limiting_arm: str | None
    n_items: int
    n_eligible: int
    n_neither: int
    n_missing: int
    reason: str | None
    p_value: float | None = None  # intersection-union p-value of "switch > 0.5" (largest arm p-value)

    @property
    def above_chance(self) -> bool | None:
        """Whether every arm's exact one-sided test of ``rate <= 0.5`` rejects at :data:`ALPHA`."""
        return None if self.p_value is None else self.p_value <= ALPHA

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "family": self.family,
            "group": self.group,
            "pooled": self.pooled,
            "arms": [{"label": a.label, "role": a.role, "k": a.k, "n": a.n, "rate": a.rate} for a in self.arms],
            "switch": self.switch,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "limiting_arm": self.limiting_arm,
            "ci_above_chance": self.above_chance,
            "p_value": self.p_value,
            "n_items": self.n_items,
            "n_eligible": self.n_eligible,
            "n_neither": self.n_neither,
            "n_missing": self.n_missing,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class OrthoResult:
    """Switch rates per model and family, pooled groups, and every item's outcome."""

    families: tuple[Family, ...]
    models: tuple[str, ...]
    min_per_arm: int
    rows: tuple[SwitchRow, ...]
    pooled: tuple[SwitchRow, ...]
    outcomes: tuple[ItemOutcome, ...]
    n_clips: int
    reference_counts: Mapping[str, Mapping[str, int]]  # family -> arm label -> reference items
    source: str = ""
    dataset: str | None = None
    chance: float = CHANCE
    denominator: str = "eligible"
    language: str = "en"

    def row(self, model: str, family: str) -> SwitchRow:
        """The row for ``model`` on ``family`` (a family or pooled group name)."""
        for r in self.rows + self.pooled:
            if r.model == model and r.family == family:
                return r
        raise KeyError((model, family))

    def to_dict(self) -> dict[str, object]:
        by_name = {f.name: f for f in self.families}
        return {
            "probe": "switch-rate",
            "params": {
                "families": [f.name for f in self.families],
                "min_per_arm": self.min_per_arm,
                "models": list(self.models),
                "denominator": self.denominator,
                **({} if self.language == "en" else {"language": self.language}),
                "ci": "95% for the minimum over arms: smallest exact one-sided 97.5% lower bound; smallest "
                "exact upper bound at 0.025 / arms (Bonferroni)",
                "above_chance": f"every arm's exact one-sided binomial test of rate <= 0.5 rejects at {ALPHA} "
                "(intersection-union test)",
            },
            "source": self.source,
            "dataset": self.dataset,
            "chance": self.chance,
            "n_clips": self.n_clips,
            "roles": dict(ROLE_MEANING),
            "families": [f.to_dict() for f in self.families],
            "reference_items": {k: dict(v) for k, v in self.reference_counts.items()},
            "models": list(self.models),
            "rows": [r.to_dict() for r in self.rows],
            "pooled": [r.to_dict() for r in self.pooled],
            "items": [o.to_dict(by_name) for o in self.outcomes],
        }


# --- matching -------------------------------------------------------------------------------


def _single_case(text: str) -> bool:
    return not any(c.islower() for c in text) or not any(c.isupper() for c in text)


def _context_ok(family: Family, text: str, start: int, end: int) -> bool:
    if family.needs_name:
        m = _NEXT_WORD.match(text, end)
        if m is None or not (m.group(1)[0].isupper() or _single_case(text)):
            return False
    if family.not_after:
        m = _PREV_WORD.search(text[:start])
        if m and re.fullmatch(family.not_after, m.group(1), re.IGNORECASE):
            return False
    if family.not_before:
        m = _FOLLOW_WORD.match(text, end)
        if m and re.fullmatch(family.not_before, m.group(1), re.IGNORECASE):
            return False
    if family.needs_number and not _next_to_amount(family.language, text, start, end):
        return False
    return True


def _next_to_amount(language: str, text: str, start: int, end: int) -> bool:
    """Digits right after ``end`` (``€5``), or a number right before ``start``: digits, or a number
    word of ``language``, optionally followed by a glue word (``20 millones de euros``)."""
    if _DIGITS_AFTER.match(text, end) or _DIGIT_BEFORE.search(text, 0, start):
        return True
    words = NUMBER_WORDS.get(language)
    before = text[:start]
    for _ in range(2):  # the word before, then (past one glue word) the one before that
        m = _WORDS_BEFORE.search(before)
        if m is None:
            return False
        word = m.group(1).lower()
        if word[-1].isdigit() or (words is not None and re.fullmatch(words, word)):
            return True
        glue = NUMBER_GLUE.get(language)
        if glue is None or not re.fullmatch(glue, word.rstrip("'\u2019")):
            return False
        before = before[: m.start()]
    return False


def find_occurrences(text: str, family: Family, context: bool = True) -> list[Occurrence]:
    """Non-overlapping arm occurrences of ``family`` in raw ``text``, in text order.

    ``context=False`` skips the family's context rules (used on hypotheses, where alignment
    already fixes the location).

    >>> from asr_audit.probes.predfiles.conventions import get_family
    >>> [(o.text, o.arm) for o in find_occurrences("Thank you, Mr. President. Mister Tajani!", get_family("mr"))]
    [('Mr', 1), ('Mister', 0)]
    >>> find_occurrences("He lives on Baker St. near the park", get_family("st"))
    []
    """
    found = []
    for arm, pattern in enumerate(family.patterns()):
        for m in pattern.finditer(text):
            if not context or _context_ok(family, text, m.start(), m.end()):
                found.append(Occurrence(m.start(), m.end(), arm, m.group()))
    found.sort(key=lambda o: (o.start, -(o.end - o.start), o.arm))
    out: list[Occurrence] = []
    for occ in found:
        if not out or occ.start >= out[-1].end:
            out.append(occ)
    return out


def tokenize(text: str, currency: bool = False) -> list[Token]:
    """Lower-cased word tokens of raw text with their character spans (hyphens split words);
    ``currency``: ``€`` is a token too (for the non-English euro families).

    >>> [t.norm for t in tokenize("To-day, Mr. O'Neil paid 5% of £20.")]
    ['to', 'day', 'mr', "o'neil", 'paid', '5', '%', 'of', '20']
    >>> [t.norm for t in tokenize("Son 5€", currency=True)]
    ['son', '5', '€']
    """
    pattern = _TOKEN_CURRENCY if currency else _TOKEN
    return [Token(m.group().lower().replace("\u2019", "'"), m.start(), m.end()) for m in pattern.finditer(text)]


def align_indices(ref: Sequence[Token], hyp: Sequence[Token]) -> list[int | None]:
    """For each reference token, the index of the hypothesis token aligned to it (``None``: deleted)."""
    if not ref:
        return []
    if not hyp:
        return [None] * len(ref)
    import kaldialign

    pairs = kaldialign.align([t.norm for t in ref], [t.norm for t in hyp], _EPS)
    out: list[int | None] = []
    j = 0
    for r, h in pairs:
        if r != _EPS:
            out.append(j if h != _EPS else None)
        if h != _EPS:
            j += 1
    return out


def reference_items(clip_id: str, reference: str, families: Iterable[Family]) -> list[Item]:
    """Every arm occurrence of every family in one raw reference."""
    return [
        Item(clip_id, f.name, o.arm, o.start, o.end, o.text) for f in families for o in find_occurrences(reference, f)
    ]


def collapse(tokens: Sequence[Token], occurrences: Sequence[Occurrence], family: Family) -> list[Token]:
    """Tokens with each arm occurrence replaced by one arm-blind placeholder token.

    Both arms get the same placeholder, so the alignment cannot favour either arm; a spaced form
    ("to day") and a closed one ("today") become one token each and align with each other.
    """
    out: list[Token] = []
    k = 0
    for t in tokens:
        while k < len(occurrences) and occurrences[k].end <= t.start:
            k += 1
        if k < len(occurrences) and occurrences[k].start < t.end:
            occ = occurrences[k]
            if not out or out[-1].arm is None or out[-1].start != occ.start:
                out.append(Token(_PLACEHOLDER + family.name, occ.start, occ.end, occ.arm))
        else:
            out.append(t)
    return out


def classify(
    items: Sequence[Item],
    family: Family,
    reference: str,
    ref_tokens: Sequence[Token],
    hyp: str,
    hyp_tokens: Sequence[Token],
) -> list[tuple[str, int | None, str]]:
    """``(status, hyp_arm, hyp_text)`` for each item of ``family`` in one clip.

    The reference's arm occurrences (all of them, items or not) and the hypothesis's (forms only:
    the alignment fixes the location) are collapsed to one placeholder each, the two token
    sequences are aligned, and an item's placeholder aligned to a hypothesis placeholder takes
    that occurrence's arm; aligned to another word or to nothing, the item is ``neither``.
    """
    ref_c = collapse(ref_tokens, find_occurrences(reference, family, context=False), family)
    hyp_c = collapse(hyp_tokens, find_occurrences(hyp, family, context=False), family)
    mapping = align_indices(ref_c, hyp_c)
    where = {t.start: i for i, t in enumerate(ref_c) if t.arm is not None}
    out: list[tuple[str, int | None, str]] = []
    for it in items:
        i = where.get(it.start)
        j = None if i is None else mapping[i]
        if j is None:
            out.append(("neither", None, ""))
            continue
        h = hyp_c[j]
        text = hyp[h.start : h.end]
        if h.arm is None:
            out.append(("neither", None, text))
        else:
            out.append(("same" if h.arm == it.ref_arm else "other", h.arm, text))
    return out


# --- scoring --------------------------------------------------------------------------------


def min_over_arms(arms: Sequence[tuple[int, int]]) -> tuple[float, float, float, float]:
    """``(switch, ci_low, ci_high, p_value)`` for the minimum rate over arms of ``(k, n)`` counts
    (every ``n > 0``): see the module docstring (intersection-union test, exact bounds).

    >>> [round(x, 4) for x in min_over_arms([(20, 20), (19, 20)])]
    [0.95, 0.7513, 0.9994, 0.0]
    """
    bonferroni = ALPHA / len(arms)
    switch = min(k / n for k, n in arms)
    low = min(clopper_pearson_lower(k, n, ALPHA) for k, n in arms)
    high = min(clopper_pearson_upper(k, n, bonferroni) for k, n in arms)
    p_value = max(binom_tail_ge(k, n, CHANCE) for k, n in arms)
    return switch, low, high, p_value


def _score(
    model: str,
    name: str,
    group: str,
    pooled: bool,
    labels: Sequence[tuple[str, str]],
    outcomes: Sequence[tuple[int, ItemOutcome]],
    min_per_arm: int,
    denominator: str = "eligible",
) -> SwitchRow:
    """``outcomes``: (reference arm slot, outcome) pairs; ``labels``: (label, role) per slot."""
    ks = [0] * len(labels)
    ns = [0] * len(labels)
    n_neither = n_missing = 0
    for slot, o in outcomes:
        if o.status == "neither":
            n_neither += 1
            if denominator == "paper":  # the paper's code: neither arm written = not the reference's
                ns[slot] += 1
        elif o.status == "missing":
            n_missing += 1
        else:
            ns[slot] += 1
            ks[slot] += o.status == "same"
    arms = tuple(ArmCount(lab, role, k, n) for (lab, role), k, n in zip(labels, ks, ns))
    short = [a for a in arms if a.n < min_per_arm]
    switch = low = high = limiting = reason = p_value = None
    if short:
        reason = "; ".join(
            f"arm {a.label!r} has {a.n} eligible item{'s' if a.n != 1 else ''} (< min_per_arm {min_per_arm})"
            for a in short
        )
    else:
        lim = min(arms, key=lambda a: (a.k / a.n, a.n, arms.index(a)))
        switch, low, high, p_value = min_over_arms([(a.k, a.n) for a in arms])
        limiting = lim.label
    return SwitchRow(
        model,
        name,
        group,
        pooled,
        arms,
        switch,
        low,
        high,
        limiting,
        len(outcomes),
        sum(ns),
        n_neither,
        n_missing,
        reason,
        p_value,
    )


def switch_rate(
    pred_set: PredictionSet,
    families: Sequence[str] | None = None,
    min_per_arm: int = DEFAULT_MIN_PER_ARM,
    models: Sequence[str] | None = None,
    denominator: str = "eligible",
    language: str = "en",
) -> OrthoResult:
    """Orthographic switch rate of every model on every selected family (see the module docstring).

    ``denominator``: ``eligible`` (items where the model wrote either arm) or ``paper`` (also
    the items where it wrote neither, as the paper's code counts). ``language`` (a primary
    subtag) picks the convention families (:func:`~asr_audit.probes.predfiles.conventions.families_for`).

    ``families`` names families and/or groups (``None``: all); ``models`` a subset of the
    prediction set's models (``None``: all). Output is sorted by model name and registry order, so
    the input order of models or families does not matter.
    """
    if isinstance(min_per_arm, bool) or not isinstance(min_per_arm, int) or min_per_arm < 1:
        raise ConfigError(f"min_per_arm {min_per_arm!r} must be an integer >= 1")
    if denominator not in DENOMINATORS:
        raise ConfigError(f"unknown switch-rate denominator {denominator!r}; valid: {', '.join(DENOMINATORS)}")
    fams = resolve_families(families, language)
    currency = language != "en"  # English keeps its tokens (and its outputs) as before
    by_name = {f.name: f for f in fams}
    available = set(pred_set.models)
    chosen = sorted(set(models)) if models is not None else sorted(available)
    unknown = [m for m in chosen if m not in available]
    if unknown or not chosen:
        raise ConfigError(
            f"unknown model(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"available in {pred_set.source}: {', '.join(sorted(available))}"
        )

    items_by_clip: dict[str, list[Item]] = {}
    ref_counts = {f.name: {a.label: 0 for a in f.arms} for f in fams}
    for clip_id, ref in pred_set.references.items():
        items = reference_items(clip_id, ref, fams)
        if items:
            items_by_clip[clip_id] = items
            for it in items:
                ref_counts[it.family][by_name[it.family].arms[it.ref_arm].label] += 1

    outcomes: list[ItemOutcome] = []
    for model in chosen:
        for clip_id in sorted(items_by_clip):
            ref = pred_set.references[clip_id]
            hyp = pred_set.hypothesis(model, clip_id)
            if hyp is None:
                outcomes.extend(ItemOutcome(model, it, "missing", None, "") for it in items_by_clip[clip_id])
                continue
            ref_tokens, hyp_tokens = tokenize(ref, currency), tokenize(hyp, currency)
            for f in fams:
                mine = [it for it in items_by_clip[clip_id] if it.family == f.name]
                if mine:
                    for it, (status, arm, text) in zip(mine, classify(mine, f, ref, ref_tokens, hyp, hyp_tokens)):
                        outcomes.append(ItemOutcome(model, it, status, arm, text))
    order = {f.name: i for i, f in enumerate(fams)}
    outcomes.sort(key=lambda o: (o.model, o.item.clip_id, order[o.item.family], o.item.start))

    rows: list[SwitchRow] = []
    pooled: list[SwitchRow] = []
    groups: dict[str, list[Family]] = {}
    for f in fams:
        groups.setdefault(f.group, []).append(f)
    for model in chosen:
        own = [o for o in outcomes if o.model == model]
        for f in fams:
            sel = [(o.item.ref_arm, o) for o in own if o.item.family == f.name]
            rows.append(
                _score(
                    model, f.name, f.group, False, [(a.label, a.role) for a in f.arms], sel, min_per_arm, denominator
                )
            )
        for group, members in groups.items():
            if len(members) < 2:
                continue
            names = {f.name for f in members}
            role_slot = {r: i for i, r in enumerate(ROLES)}
            sel = [
                (role_slot[by_name[o.item.family].arms[o.item.ref_arm].role], o) for o in own if o.item.family in names
            ]
            labels = [(f"{r}: {ROLE_MEANING[r]}", r) for r in ROLES]
            pooled.append(_score(model, group, group, True, labels, sel, min_per_arm, denominator))
    return OrthoResult(
        fams,
        tuple(chosen),
        min_per_arm,
        tuple(rows),
        tuple(pooled),
        tuple(outcomes),
        len(pred_set.references),
        ref_counts,
        pred_set.source,
        pred_set.dataset,
        denominator=denominator,
        language=language,
    )


SWITCH_RATE_PARAMS = ("families", "min_per_arm", "denominator", "language", "models")


#: ``asr-audit switch-rate``'s flag of every option
FLAGS = flag_table(
    CliFlag(
        "families",
        str,
        None,
        "Comma-separated families and/or groups (English: honorific, spacing, modern, symbol; "
        "es/fr/de: honorific, abbreviation, symbol); default all of the language's.",
        parse=split_names,
    ),
    CliFlag("min_per_arm", int, DEFAULT_MIN_PER_ARM, "Eligible items an arm needs for the switch rate to be defined."),
    CliFlag(
        "denominator",
        str,
        "eligible",
        "eligible: items where the model wrote either arm; paper: also those where it wrote neither (the paper's code).",
    ),
    LANGUAGE,
    MODELS,
)
#: ``asr-audit switch-rate``'s own flag (how its table is printed)
SHOW_EMPTY = CliFlag("show_empty", bool, False, "Also list families with no reference items.", ("--show-empty",))
#: ``asr-audit switch-rate --help``'s worked examples: (command line, what it does)
EXAMPLES = (
    ("asr-audit switch-rate --preds preds/", "switch rate per model and convention family"),
    ("asr-audit switch-rate --preds preds/ --families honorific --csv switch.csv", "one family, as CSV"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SwitchRateOptions:
    """The switch-rate probe's options, from ``asr-audit switch-rate`` flags or ``[probes.switch_rate]``."""

    families: tuple[str, ...] | None = None  # families and/or groups; None: all
    min_per_arm: int = DEFAULT_MIN_PER_ARM
    denominator: str = "eligible"  # see the module docstring: eligible (asr-audit) or paper (the paper's code)
    language: str = "en"  # a primary subtag: whose convention families are scored
    models: tuple[str, ...] | None = None  # the models scored; None: every model of the set

    def __post_init__(self) -> None:
        check(
            bool(families_for(self.language)) and self.language == self.language.lower(),
            "language",
            self.language,
            "has no convention families",
            f"use one of {', '.join(available_languages())}",
        )
        check(
            self.denominator in DENOMINATORS,
            "denominator",
            self.denominator,
            f"is not one of {', '.join(DENOMINATORS)}",
            "use eligible (asr-audit) or paper (the paper's code)",
        )
        check(
            self.min_per_arm >= 1,
            "min_per_arm",
            self.min_per_arm,
            "must be >= 1",
            "use 1 or more eligible items per arm",
        )
        known = {*available_families(self.language), *available_groups(self.language)}
        bad = [n for n in self.families or () if n.strip().lower() not in known]
        where = "" if self.language == "en" else f" of language {self.language!r}"
        check(
            not bad,
            "families",
            self.families,
            f"names an unknown convention family{where} {bad[0]!r}" if bad else "",
            f"use the families {', '.join(available_families(self.language))} "
            f"or groups {', '.join(available_groups(self.language))}",
        )
        check(
            self.families is None or bool(self.families),
            "families",
            self.families,
            "selects no family",
            "name at least one family or group, or leave it out for all",
        )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> SwitchRateOptions:
        """Options from flag or spec values (``None`` = not given)."""
        r = Reader(values, surface, SWITCH_RATE_PARAMS, "switch_rate")
        return build(
            cls,
            surface,
            families=r.names("families", None),
            min_per_arm=r.integer("min_per_arm", DEFAULT_MIN_PER_ARM),
            denominator=r.text("denominator", "eligible"),
            language=primary_language(r.text("language", "en")),
            models=r.names("models", None),
        )


def _run_switch_rate(inputs: ProbeInputs, options: SwitchRateOptions) -> OrthoResult:
    return switch_rate(
        inputs.predictions,
        options.families,
        options.min_per_arm,
        None if options.models is None else list(options.models),
        options.denominator,
        options.language,
    )


#: the switch-rate probe: ``asr-audit switch-rate``, ``[probes.switch_rate]`` and :func:`asr_audit.api.switch_rate`
SWITCH_RATE: FunctionProbe[SwitchRateOptions, OrthoResult] = probe(
    "switch_rate",
    SWITCH_RATE_PARAMS,
    "orthographic switch rate on convention families",
    SwitchRateOptions.from_mapping,
    _run_switch_rate,
    flags=FLAGS,
    examples=EXAMPLES,
)
