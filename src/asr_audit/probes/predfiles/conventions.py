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
  not match (``"day to day"`` is not the archaic "to day");
* ``needs_number``: the occurrence must stand next to an amount: a number (digits, or a number
  word of the family's language, possibly followed by ``de`` / ``d'``) right before it, or digits
  right after it (``€5``); "la zona euro" is no item, "veinte euros" and "20 €" are.

Every family belongs to one language (``language``, a primary subtag). English has the families
below; Spanish, French and German have honorifics, common abbreviations, percent and currency
(after the paper's code, which also has percent for Italian, Dutch, Polish and Portuguese:
those are here too). :func:`families_for` lists a language's families and the selection
functions take a ``language`` (English by default).
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
    language: str = "en"
    needs_number: bool = False
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
        out: dict[str, object] = {
            "name": self.name,
            "group": self.group,
            "arms": [a.to_dict() for a in self.arms],
            "why": self.why,
            "needs_name": self.needs_name,
            "not_after": self.not_after,
            "not_before": self.not_before,
            "note": self.note,
        }
        if self.language != "en":  # English records keep their pre-language shape
            out.update(language=self.language, needs_number=self.needs_number)
        return out


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

# --- other languages (honorifics, common abbreviations, percent, currency) ------------------
_ES_TITLE = "the abbreviation is read as the full title before a name ('{b} García' is '{a} García')"
_PERCENT_WHY = "'%' after an amount is read '{a}'; the symbol is a spelling of the spoken words"
_EURO_WHY = "'€' with an amount is read '{a}' ('20 €' and '€20' are 'twenty {a}' in the language)"


def _other(
    language: str,
    name: str,
    group: str,
    full: Sequence[str],
    abbrev: Sequence[str],
    why: str,
    *,
    labels: tuple[str, str] | None = None,
    needs_name: bool = False,
    needs_number: bool = False,
    note: str = "",
) -> Family:
    a, b = labels or (full[0], abbrev[0])
    return Family(
        name=name,
        group=group,
        arms=(Arm(a, "A", tuple(full)), Arm(b, "B", tuple(abbrev))),
        why=why,
        needs_name=needs_name,
        note=note,
        language=language,
        needs_number=needs_number,
    )


def _percent(language: str, words: Sequence[str]) -> Family:
    return _other(
        language, f"percent_{language}", "symbol", words, ["%"], _PERCENT_WHY.format(a=words[0]), needs_number=True
    )


def _euro(language: str, words: Sequence[str]) -> Family:
    return _other(
        language,
        f"euro_{language}",
        "symbol",
        words,
        ["€"],
        _EURO_WHY.format(a=words[0]),
        needs_number=True,
        note="only next to an amount: 'la zone euro' is no item",
    )


_OTHER_FAMILIES: tuple[Family, ...] = (
    # --- Spanish -----------------------------------------------------------------------------
    _other(
        "es",
        "senor",
        "honorific",
        ["señor", "senor"],
        ["sr"],
        _ES_TITLE.format(a="señor", b="Sr."),
        labels=("señor", "Sr"),
        needs_name=True,
        note="'el señor dijo' is excluded by the name rule",
    ),
    _other(
        "es",
        "senora",
        "honorific",
        ["señora", "senora"],
        ["sra"],
        _ES_TITLE.format(a="señora", b="Sra."),
        labels=("señora", "Sra"),
        needs_name=True,
    ),
    _other(
        "es",
        "senorita",
        "honorific",
        ["señorita", "senorita"],
        ["srta"],
        _ES_TITLE.format(a="señorita", b="Srta."),
        labels=("señorita", "Srta"),
        needs_name=True,
    ),
    _other(
        "es",
        "dona",
        "honorific",
        ["doña", "dona"],
        ["dña", "dna."],
        _ES_TITLE.format(a="doña", b="Dña."),
        labels=("doña", "Dña"),
        needs_name=True,
    ),
    _other(
        "es",
        "etcetera_es",
        "abbreviation",
        ["etcétera", "etcetera"],
        ["etc"],
        "'etc.' is read 'etcétera'",
        labels=("etcétera", "etc."),
    ),
    _percent("es", ["por ciento", "porciento"]),
    _euro("es", ["euros", "euro"]),
    # --- French ------------------------------------------------------------------------------
    _other(
        "fr",
        "monsieur",
        "honorific",
        ["monsieur"],
        ["m."],
        "'M. Dupont' is read 'monsieur Dupont'",
        labels=("monsieur", "M."),
        needs_name=True,
        note="the abbreviation needs its period ('M.'); 'le monsieur' is excluded by the name rule",
    ),
    _other(
        "fr",
        "madame",
        "honorific",
        ["madame"],
        ["mme"],
        "'Mme Durand' is read 'madame Durand'",
        labels=("madame", "Mme"),
        needs_name=True,
    ),
    _other(
        "fr",
        "mademoiselle",
        "honorific",
        ["mademoiselle"],
        ["mlle"],
        "'Mlle Roux' is read 'mademoiselle Roux'",
        labels=("mademoiselle", "Mlle"),
        needs_name=True,
    ),
    _percent("fr", ["pour cent", "pourcent"]),
    _euro("fr", ["euros", "euro"]),
    # --- German ------------------------------------------------------------------------------
    _other(
        "de",
        "dr_de",
        "honorific",
        ["doktor"],
        ["dr"],
        "'Dr. Müller' is read 'Doktor Müller'",
        labels=("Doktor", "Dr"),
        needs_name=True,
    ),
    _other(
        "de",
        "usw",
        "abbreviation",
        ["und so weiter"],
        ["usw"],
        "'usw.' is read 'und so weiter'",
        labels=("und so weiter", "usw."),
    ),
    _other(
        "de",
        "bzw",
        "abbreviation",
        ["beziehungsweise"],
        ["bzw"],
        "'bzw.' is read 'beziehungsweise'",
        labels=("beziehungsweise", "bzw."),
    ),
    _other(
        "de",
        "dh",
        "abbreviation",
        ["das heißt", "das heisst"],
        ["d.h", "d. h"],
        "'d. h.' is read 'das heißt'",
        labels=("das heißt", "d. h."),
    ),
    _other(
        "de",
        "zb",
        "abbreviation",
        ["zum beispiel"],
        ["z.b", "z. b"],
        "'z. B.' is read 'zum Beispiel'",
        labels=("zum Beispiel", "z. B."),
    ),
    _percent("de", ["prozent"]),
    _euro("de", ["euro", "euros"]),
    # --- percent, remaining languages of the paper's code -----------------------------------
    _percent("it", ["per cento", "percento"]),
    _percent("nl", ["procent"]),
    _percent("pl", ["procent", "procentu", "procenty", "procentów", "procentach"]),
    _percent("pt", ["por cento", "porcento"]),
)
_ALL: tuple[Family, ...] = _FAMILIES + _OTHER_FAMILIES

# number words that may stand before an amount's unit ("veinte euros"), per language; a German
# compound ("dreiundzwanzig") ends in one of its number stems
NUMBER_WORDS: dict[str, str] = {
    "en": r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|\w+ty|hundred|thousand"
    r"|million|millions|billion|billions|half",
    "es": r"un|uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|trece|catorce|quince|dieci\w+"
    r"|veinte|veinti\w+|treinta|cuarenta|cincuenta|sesenta|setenta|ochenta|noventa|cien|ciento|\w+cientos"
    r"|\w+cientas|mil|millón|millon|millones|medio",
    "fr": r"un|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|treize|quatorze|quinze|seize"
    r"|vingt|vingts|trente|quarante|cinquante|soixante|cent|cents|mille|million|millions|milliard|milliards|demi",
    "de": r"\w*(?:eins|ein|eine|einen|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf|zig|ßig|sig"
    r"|hundert|tausend)|million|millionen|milliarde|milliarden|halb",
    "it": r"\w*(?:uno|una|due|tre|quattro|cinque|sei|sette|otto|nove|dieci|undici|dodici|venti|trenta|anta"
    r"|cento|mila|mille)|milione|milioni",
    "pt": r"um|uma|dois|duas|três|tres|quatro|cinco|seis|sete|oito|nove|dez|onze|doze|\w+ze|vinte|trinta"
    r"|quarenta|cinquenta|sessenta|setenta|oitenta|noventa|cem|cento|\w+centos|mil|milhão|milhões",
    "nl": r"\w*(?:een|twee|drie|vier|vijf|zes|zeven|acht|negen|tien|elf|twaalf|tig|honderd|duizend)|miljoen",
    "pl": r"\w*(?:jeden|jedna|dwa|dwie|trzy|cztery|pięć|sześć|siedem|osiem|dziewięć|dziesięć|naście|dzieścia"
    r"|dziesiąt|sto|set|tysiąc|tysięcy)",
}
# words between an amount and its unit ("20 millones de euros", "20 millions d'euros")
NUMBER_GLUE: dict[str, str] = {"es": r"de", "fr": r"de|d", "pt": r"de", "it": r"di"}

_BY_NAME = {f.name: f for f in _ALL}


def _language(language: str) -> str:
    return language.replace("_", "-").split("-")[0].lower() or "en"


def families_for(language: str = "en") -> tuple[Family, ...]:
    """The families of ``language`` (any tag: ``es-MX`` is Spanish), in registry order.

    >>> [f.name for f in families_for("fr")]
    ['monsieur', 'madame', 'mademoiselle', 'percent_fr', 'euro_fr']
    """
    lang = _language(language)
    return tuple(f for f in _ALL if f.language == lang)


def available_languages() -> list[str]:
    """Languages with at least one family, English first.

    >>> available_languages()
    ['en', 'es', 'fr', 'de', 'it', 'nl', 'pl', 'pt']
    """
    return list(dict.fromkeys(f.language for f in _ALL))


def _groups(language: str) -> dict[str, tuple[str, ...]]:
    groups: dict[str, tuple[str, ...]] = {}
    for f in families_for(language):
        groups[f.group] = groups.get(f.group, ()) + (f.name,)
    return groups


def available_families(language: str = "en") -> list[str]:
    """Family names of ``language``, in registry order."""
    return [f.name for f in families_for(language)]


def available_groups(language: str = "en") -> list[str]:
    """Group names (``honorific``, ``spacing``, ...) of ``language``, in registry order."""
    return list(_groups(language))


def _no_family_fix(language: str) -> str:
    if not families_for(language):
        return f"no convention family is defined for language {language!r}; fix: use one of {', '.join(available_languages())}"
    return ""


def get_family(name: str, language: str = "en") -> Family:
    """The family called ``name`` in ``language``; an unknown name raises :class:`ConfigError` listing valid ones."""
    family = _BY_NAME.get(name)
    if family is not None and family.language == _language(language):
        return family
    no_language = _no_family_fix(language)
    if no_language:
        raise ConfigError(no_language)
    where = "" if _language(language) == "en" else f" of language {_language(language)!r}"
    raise ConfigError(
        f"unknown convention family {name!r}{where}; fix: use one of the families "
        f"{', '.join(available_families(language))} or groups {', '.join(available_groups(language))}"
    )


def resolve_families(names: Iterable[str] | None = None, language: str = "en") -> tuple[Family, ...]:
    """Families of ``language`` selected by names of families and/or groups, in registry order
    (``None``: all of the language's).

    >>> [f.name for f in resolve_families(["mr", "honorific"])]
    ['mr', 'mrs', 'dr', 'st']
    >>> [f.name for f in resolve_families(["symbol"], language="es")]
    ['percent_es', 'euro_es']
    """
    no_language = _no_family_fix(language)
    if no_language:
        raise ConfigError(no_language)
    if names is None:
        return families_for(language)
    if isinstance(names, str):
        names = names.split(",")
    groups = _groups(language)
    wanted: set[str] = set()
    for raw in names:
        name = raw.strip().lower()
        if name in groups:
            wanted.update(groups[name])
        else:
            wanted.add(get_family(name, language).name)
    if not wanted:
        raise ConfigError(
            "no convention family selected; fix: name at least one of "
            f"{', '.join(available_groups(language) + available_families(language))}"
        )
    return tuple(f for f in families_for(language) if f.name in wanted)
