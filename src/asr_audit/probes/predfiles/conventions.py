"""Orthographic convention families: spellings of one spoken form that a corpus chooses between.

A *family* is a set of two *arms*, written forms that are acoustically identical (Mr / Mister,
"any one" / "anyone"). Because the audio cannot tell the arms apart, a model that writes the
reference's arm more often than chance has learned the *corpus's* convention, not the sound.
Every family here documents why its arms sound the same; candidates that were rejected (different
words, different sounds, open-ended sets) are listed with their reasons in ``docs/conventions.md``.

Arms carry a *role*: ``"A"`` is the expanded or spaced form (Mister, "any one", "per cent"),
``"B"`` the abbreviated or closed form (Mr, "anyone", "percent"). Pooled statistics over a
group of families pool items by role.

Forms are a tiny word-sequence syntax, matched case-insensitively on **raw** text:

* words are separated by single spaces, which match any run of whitespace in the text;
* every other character is literal (``"to-day"``, ``"o.k"``, ``"%"``);
* a form starting (ending) with a word character must start (end) at a word boundary, where a
  hyphen counts as part of the word: ``"to-day"`` does not match inside ``"day-to-day"``,
  ``"any one"`` does not match ``"any one-off"``; trailing punctuation is tolerated
  (``"Mr."``, ``"anyone's"``).

Context rules (applied to the reference only, and to every arm of the family alike so the
partition is not biased towards one arm):

* ``needs_name``: the occurrence must be followed by a capitalised word (a title before a
  name: "St Paul", not "Baker St"); in single-case text (all lower or all upper case) where
  capitalisation carries no information, any following alphabetic word is accepted;
* ``not_after`` / ``not_before``: a regex that the immediately preceding / following word must
  not match (``"day to day"`` is not the archaic "to day").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from asr_audit.errors import ConfigError

ROLES = ("A", "B")
ROLE_MEANING = {"A": "expanded / spaced form", "B": "abbreviated / closed form"}
_HYPHENS = "\u2010\u2011-"


@dataclass(frozen=True, slots=True)
class Arm:
    """One written form of a family: a display label, its role and the surface forms it covers."""

    label: str
    role: str
    forms: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"arm {self.label!r}: role {self.role!r} is not one of {ROLES}")
        if not self.forms or any(not f.strip() for f in self.forms):
            raise ValueError(f"arm {self.label!r} needs at least one non-empty form")

    def to_dict(self) -> dict[str, object]:
        return {"label": self.label, "role": self.role, "forms": list(self.forms)}


@dataclass(frozen=True, slots=True)
class Family:
    """A set of acoustically identical spellings, with the reason they sound the same."""

    name: str
    group: str
    arms: tuple[Arm, ...]
    why: str
    needs_name: bool = False
    not_after: str | None = None
    not_before: str | None = None
    note: str = ""
    _patterns: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        roles = sorted(a.role for a in self.arms)
        if roles != sorted(ROLES):
            raise ValueError(f"family {self.name!r} needs one arm per role {ROLES}, got {roles}")
        object.__setattr__(self, "_patterns", tuple(compile_arm(a) for a in self.arms))

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(a.label for a in self.arms)

    def arm_index(self, role: str) -> int:
        return next(i for i, a in enumerate(self.arms) if a.role == role)

    def patterns(self) -> tuple[re.Pattern[str], ...]:
        """One compiled, case-insensitive pattern per arm (in arm order)."""
        return self._patterns

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "group": self.group,
            "arms": [a.to_dict() for a in self.arms],
            "why": self.why,
            "needs_name": self.needs_name,
            "not_after": self.not_after,
            "not_before": self.not_before,
            "note": self.note,
        }


def form_regex(form: str) -> str:
    """Regex source for one surface form (see the module docstring for the syntax).

    >>> bool(re.search(form_regex("to-day"), "day-to-day", re.I))
    False
    >>> re.search(form_regex("any one"), "Any  one of them", re.I).group()
    'Any  one'
    >>> bool(re.search(form_regex("mr"), "Mrs Smith", re.I))
    False
    """
    words = form.split()
    body = r"\s+".join("".join(f"[{_HYPHENS}]" if ch in _HYPHENS else re.escape(ch) for ch in word) for word in words)
    start = rf"(?<![\w{_HYPHENS}])" if re.match(r"\w", form) else ""
    end = rf"(?!\w|[{_HYPHENS}]\w)" if re.search(r"\w$", form) else ""
    return start + body + end


def compile_arm(arm: Arm) -> re.Pattern[str]:
    """All forms of an arm as one alternation, longest form first (so "o.k" wins over "ok")."""
    forms = sorted(arm.forms, key=lambda f: (-len(f), f))
    return re.compile("|".join(f"(?:{form_regex(f)})" for f in forms), re.IGNORECASE)


def _honorific(name: str, full: Sequence[str], abbrev: Sequence[str], why: str, note: str = "") -> Family:
    return Family(
        name=name,
        group="honorific",
        arms=(Arm(full[0].capitalize(), "A", tuple(full)), Arm(abbrev[0].capitalize(), "B", tuple(abbrev))),
        why=why,
        needs_name=True,
        note=note,
    )


def _spacing(
    name: str,
    spaced: Sequence[str],
    closed: Sequence[str],
    why: str,
    group: str = "spacing",
    *,
    not_after: str | None = None,
    not_before: str | None = None,
) -> Family:
    return Family(
        name=name,
        group=group,
        arms=(Arm(spaced[0], "A", tuple(spaced)), Arm(closed[0], "B", tuple(closed))),
        why=why,
        not_after=not_after,
        not_before=not_before,
    )


_TITLE_WHY = (
    "the abbreviation is never pronounced letter by letter before a name: '{b}. Smith' is "
    "read '{a} Smith', so both spellings are one spoken word"
)
# number words and digits after "to day" / "to night" ("to day one", "to day 3")
_NUMBERISH = r"\d.*|one|two|three|four|five|six|seven|eight|nine|ten|first|second|third"

_FAMILIES: tuple[Family, ...] = (
    # --- honorifics: a title before a name --------------------------------------------------
    _honorific(
        "mr",
        ["mister"],
        ["mr"],
        _TITLE_WHY.format(a="Mister", b="Mr"),
        note="'Mr and Mrs Smith' is not an item: 'and' is not a capitalised name",
    ),
    _honorific(
        "mrs",
        ["missus", "missis"],
        ["mrs"],
        "'Mrs' is pronounced /'mɪsɪz/; 'Missus' / 'Missis' are its phonetic spellings",
        note="'the missus' (wife) is excluded by the name rule",
    ),
    _honorific(
        "dr",
        ["doctor"],
        ["dr"],
        _TITLE_WHY.format(a="Doctor", b="Dr"),
        note="the name rule excludes 'the doctor said' and a street's 'Dr' at the end of a name",
    ),
    _honorific(
        "st",
        ["saint"],
        ["st"],
        _TITLE_WHY.format(a="Saint", b="St"),
        note="the name rule excludes 'St' as street ('Baker St.') unless a capitalised word "
        "follows it ('Baker St. London' is a residual false item); 'a saint' is excluded",
    ),
    # --- archaic / British compound spacing ------------------------------------------------
    _spacing(
        "any_one",
        ["any one", "any-one"],
        ["anyone"],
        "one stressed compound vs two words with the same phones; 'any one (of them)' and "
        "'anyone' differ in meaning but not in sound (stress differences are slight and "
        "not marked by speakers reliably)",
    ),
    _spacing(
        "every_one",
        ["every one", "every-one"],
        ["everyone"],
        "same phones; 'every one (of them)' vs 'everyone' differ in meaning, not in sound",
    ),
    _spacing(
        "some_one",
        ["some one", "some-one"],
        ["someone"],
        "archaic spacing of 'someone' (common in 19th-century texts such as LibriSpeech's)",
    ),
    _spacing(
        "no_one",
        ["no one"],
        ["no-one", "noone"],
        "'no one' (US / modern) and 'no-one' (British) are one word in speech; 'noone' is a "
        "closed misspelling of the same word",
    ),
    _spacing(
        "every_body",
        ["every body", "every-body"],
        ["everybody"],
        "archaic spacing (Austen, Dickens); 'every body of water' is rare and sounds the same",
    ),
    _spacing(
        "every_thing", ["every thing", "every-thing"], ["everything"], "archaic spacing of 'everything'; same phones"
    ),
    _spacing(
        "to_day",
        ["to day", "to-day"],
        ["today"],
        "archaic spacing / hyphenation of 'today'",
        not_after=r"day|days",
        not_before=_NUMBERISH,
    ),
    _spacing("to_morrow", ["to morrow", "to-morrow"], ["tomorrow"], "archaic spacing / hyphenation of 'tomorrow'"),
    _spacing(
        "to_night",
        ["to night", "to-night"],
        ["tonight"],
        "archaic spacing / hyphenation of 'tonight'",
        not_after=r"day|days|night|nights",
        not_before=_NUMBERISH + r"|school|schools|shift|shifts|time|mode",
    ),
    _spacing("for_ever", ["for ever"], ["forever"], "British 'for ever' and US 'forever' are the same spoken word"),
    # --- modern spelling variants of one word ----------------------------------------------
    _spacing(
        "per_cent", ["per cent"], ["percent"], "British 'per cent' vs US 'percent': one spoken word", group="modern"
    ),
    _spacing("e_mail", ["e-mail", "e mail"], ["email"], "hyphenated and closed spellings of one word", group="modern"),
    _spacing(
        "all_right",
        ["all right"],
        ["alright"],
        "'alright' is the informal closed spelling of 'all right' (the same sounds); 'they "
        "were all right (= all correct)' differs in meaning, not in sound",
        group="modern",
    ),
    Family(
        "okay",
        "modern",
        (Arm("okay", "A", ("okay",)), Arm("OK", "B", ("ok", "o.k"))),
        "'OK' / 'O.K.' is read 'okay'; the spellings differ, the word does not",
    ),
    # --- symbols read as words -------------------------------------------------------------
    Family(
        "percent_sign",
        "symbol",
        (Arm("percent", "A", ("percent", "per cent")), Arm("%", "B", ("%",))),
        "'%' is read 'percent'; the symbol is a spelling of the spoken word",
        note="shares the word forms with per_cent, so it is in its own group to avoid counting "
        "one reference word twice in a pooled statistic",
    ),
)

_BY_NAME = {f.name: f for f in _FAMILIES}
_GROUPS: dict[str, tuple[str, ...]] = {}
for _f in _FAMILIES:
    _GROUPS.setdefault(_f.group, ())
    _GROUPS[_f.group] += (_f.name,)


def available_families() -> list[str]:
    """Family names, in registry order."""
    return [f.name for f in _FAMILIES]


def available_groups() -> list[str]:
    """Group names (``honorific``, ``spacing``, ...), in registry order."""
    return list(_GROUPS)


def get_family(name: str) -> Family:
    """The family called ``name``; an unknown name raises :class:`ConfigError` listing valid ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ConfigError(
            f"unknown convention family {name!r}; fix: use one of the families "
            f"{', '.join(available_families())} or groups {', '.join(available_groups())}"
        ) from None


def resolve_families(names: Iterable[str] | None = None) -> tuple[Family, ...]:
    """Families selected by names of families and/or groups, in registry order (``None``: all).

    >>> [f.name for f in resolve_families(["mr", "honorific"])]
    ['mr', 'mrs', 'dr', 'st']
    """
    if names is None:
        return _FAMILIES
    if isinstance(names, str):
        names = names.split(",")
    wanted: set[str] = set()
    for raw in names:
        name = raw.strip().lower()
        if name in _GROUPS:
            wanted.update(_GROUPS[name])
        else:
            wanted.add(get_family(name).name)
    if not wanted:
        raise ConfigError(
            "no convention family selected; fix: name at least one of "
            f"{', '.join(available_groups() + available_families())}"
        )
    return tuple(f for f in _FAMILIES if f.name in wanted)
