"""The calibration benchmark in Spanish, French and German: vocabularies with spoken numbers.

Each :class:`~asr_audit.calib.templates.Vocabulary` mirrors the English one (parliament-style
templates with ``{slot}``, ``^`` and substitution words; openers, tails, closers, adverbials) and
carries the record's conventions of its language: counts in digits with the language's
thousands separator (``42.000``, ``42 000``), years in digits, ``%`` after a number
(``20 %``), abbreviated honorifics (``Sr.``, ``M.``, ``Mme``, ``Dr.``). The speaker says all of
them in words (:func:`spanish_words`, :func:`french_words`, :func:`german_words`), so every
convention is an acoustically identical pair, as in English.

The set is scored with the language's normalizer (``basic-es`` / ``basic-fr`` / ``basic-de``,
see :mod:`asr_audit.text.languages`), which makes those pairs compare equal.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from asr_audit.calib.templates import ENGLISH, Fill, Vocabulary
from asr_audit.errors import ConfigError

__all__ = [
    "CALIB_LANGUAGES",
    "VOCABULARIES",
    "calib_normalizer",
    "french_words",
    "german_words",
    "spanish_words",
    "vocabulary",
]

# --- spoken numbers ------------------------------------------------------------------------------
_ES_UNITS = (
    "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis "
    "diecisiete dieciocho diecinueve veinte veintiuno veintidós veintitrés veinticuatro veinticinco "
    "veintiséis veintisiete veintiocho veintinueve"
).split()
_ES_TENS = {3: "treinta", 4: "cuarenta", 5: "cincuenta", 6: "sesenta", 7: "setenta", 8: "ochenta", 9: "noventa"}
_ES_HUNDREDS = (
    "",
    "ciento",
    "doscientos",
    "trescientos",
    "cuatrocientos",
    "quinientos",
    "seiscientos",
    "setecientos",
    "ochocientos",
    "novecientos",
)


def _check(n: int) -> None:
    if not 0 <= n < 1_000_000:
        raise ValueError(f"number words cover 0..999999, got {n}")


def _es_apocope(words: str) -> str:
    """``uno`` before a noun or ``mil``: ``veintiuno`` -> ``veintiún``, ``treinta y uno`` -> ``treinta y un``."""
    if words.endswith("veintiuno"):
        return words[: -len("veintiuno")] + "veintiún"
    return words[:-1] if words.endswith("uno") else words


def spanish_words(n: int) -> str:
    """Spanish words for ``0 <= n < 1_000_000``.

    >>> spanish_words(21), spanish_words(100), spanish_words(251), spanish_words(21_000), spanish_words(1995)
    ('veintiuno', 'cien', 'doscientos cincuenta y uno', 'veintiún mil', 'mil novecientos noventa y cinco')
    """
    _check(n)
    if n < 30:
        return _ES_UNITS[n]
    if n < 100:
        return _ES_TENS[n // 10] + ("" if n % 10 == 0 else " y " + _ES_UNITS[n % 10])
    if n < 1000:
        if n == 100:
            return "cien"
        rest = n % 100
        return _ES_HUNDREDS[n // 100] + ("" if rest == 0 else " " + spanish_words(rest))
    thousands, rest = divmod(n, 1000)
    head = "mil" if thousands == 1 else _es_apocope(spanish_words(thousands)) + " mil"
    return head + ("" if rest == 0 else " " + spanish_words(rest))


_FR_UNITS = "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize".split()
_FR_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"}


def french_words(n: int) -> str:
    """French words for ``0 <= n < 1_000_000`` (traditional hyphenation, ``et un``).

    >>> french_words(21), french_words(71), french_words(80), french_words(95), french_words(200)
    ('vingt et un', 'soixante et onze', 'quatre-vingts', 'quatre-vingt-quinze', 'deux cents')
    >>> french_words(80_000), french_words(3_000), french_words(200_000), french_words(1995)
    ('quatre-vingt mille', 'trois mille', 'deux cent mille', 'mille neuf cent quatre-vingt-quinze')
    """
    _check(n)
    if n < 17:
        return _FR_UNITS[n]
    if n < 20:
        return "dix-" + _FR_UNITS[n - 10]
    if n < 100:
        tens, unit = divmod(n, 10)
        if tens in (7, 9):
            base = "soixante" if tens == 7 else "quatre-vingt"
            return base + (" et " if n == 71 else "-") + french_words(10 + unit)
        if tens == 8:
            return "quatre-vingts" if unit == 0 else "quatre-vingt-" + _FR_UNITS[unit]
        return _FR_TENS[tens] + ("" if unit == 0 else " et un" if unit == 1 else "-" + _FR_UNITS[unit])
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        head = "cent" if hundreds == 1 else _FR_UNITS[hundreds] + " cent" + ("s" if rest == 0 else "")
        return head + ("" if rest == 0 else " " + french_words(rest))
    thousands, rest = divmod(n, 1000)
    head = "mille" if thousands == 1 else french_words(thousands)
    if head.endswith(("vingts", "cents")):  # "quatre-vingt mille", "deux cent mille": no plural s before mille
        head = head[:-1]
    head = head if thousands == 1 else head + " mille"
    return head + ("" if rest == 0 else " " + french_words(rest))


_DE_UNITS = (
    "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn "
    "siebzehn achtzehn neunzehn"
).split()
_DE_TENS = ("", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig")


def german_words(n: int) -> str:
    """German words for ``0 <= n < 1_000_000``, one compound as German writes them.

    >>> german_words(21), german_words(101), german_words(42_000), german_words(101_000)
    ('einundzwanzig', 'einhunderteins', 'zweiundvierzigtausend', 'einhunderteintausend')
    """
    _check(n)
    if n < 20:
        return _DE_UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return ("" if unit == 0 else ("ein" if unit == 1 else _DE_UNITS[unit]) + "und") + _DE_TENS[tens]
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return ("ein" if hundreds == 1 else _DE_UNITS[hundreds]) + "hundert" + ("" if rest == 0 else german_words(rest))
    thousands, rest = divmod(n, 1000)
    head = "ein" if thousands == 1 else german_words(thousands)
    head = head[:-1] if head.endswith("eins") else head  # "einhunderteintausend"
    return head + "tausend" + ("" if rest == 0 else german_words(rest))


def _german_year(year: int) -> str:
    """``1995`` -> ``neunzehnhundertfünfundneunzig``; from 2000 the cardinal."""
    high, low = divmod(year, 100)
    if high == 19:
        return "neunzehnhundert" + ("" if low == 0 else german_words(low))
    return german_words(year)


def _grouped(sep: str) -> Callable[[int], str]:
    """The record's count: digits, thousands separated by ``sep`` (``42.000``, ``42 000``)."""

    def render(n: int) -> str:
        return f"{n:,}".replace(",", sep)

    return render


# --- slot fillers ---------------------------------------------------------------------------------
def _fillers(
    words: Callable[[int], str],
    year_words: Callable[[int], str],
    digits: Callable[[int], str],
    amount: Callable[[np.random.Generator], tuple[str, str]],
    percent: str,
    honorifics: tuple[tuple[str, str], ...],
    titles: tuple[str, ...],
    surnames: tuple[str, ...],
) -> dict[str, Callable[[np.random.Generator], Fill]]:
    def year(rng: np.random.Generator) -> Fill:
        y = int(rng.integers(1990, 2031))
        return Fill(year_words(y), str(y), "year", y)

    def count(rng: np.random.Generator) -> Fill:
        n = int(rng.integers(10, 1000)) if rng.random() < 0.75 else 1000 * int(rng.integers(2, 100))
        return Fill(words(n), digits(n), "count", n)

    def small(rng: np.random.Generator) -> Fill:
        n = int(rng.integers(2, 10))
        return Fill(words(n), words(n), None, n)

    def amount_fill(rng: np.random.Generator) -> Fill:
        spoken, written = amount(rng)
        return Fill(spoken, written, "amount", None)

    def percent_fill(rng: np.random.Generator) -> Fill:
        n = int(rng.integers(2, 96))
        return Fill(f"{words(n)} {percent}", f"{n} %", "percent", None)

    def person(rng: np.random.Generator) -> Fill:
        name = surnames[int(rng.integers(len(surnames)))]
        if rng.random() < 0.75:
            spoken, written = honorifics[int(rng.integers(len(honorifics)))]
            return Fill(f"{spoken} {name}", f"{written} {name}", "honorific", None)
        title = titles[int(rng.integers(len(titles)))]
        return Fill(f"{title} {name}", f"{title} {name}", None, None)

    return {
        "year": year,
        "count": count,
        "small": small,
        "amount": amount_fill,
        "percent": percent_fill,
        "person": person,
    }


def _es_amount(rng: np.random.Generator) -> tuple[str, str]:
    n = int(rng.choice([k for k in range(2, 100) if k % 10 != 1 or k == 11]))  # no "veintiún millones"
    return f"{spanish_words(n)} millones de euros", f"{n} millones de euros"


def _fr_amount(rng: np.random.Generator) -> tuple[str, str]:
    n = int(rng.integers(2, 100))
    unit = "millions" if rng.random() < 0.7 else "milliards"
    return f"{french_words(n)} {unit} d'euros", f"{n} {unit} d'euros"


def _de_amount(rng: np.random.Generator) -> tuple[str, str]:
    n = int(rng.integers(2, 100))
    unit = "Millionen" if rng.random() < 0.7 else "Milliarden"
    return f"{german_words(n)} {unit} Euro", f"{n} {unit} Euro"


# --- vocabularies ---------------------------------------------------------------------------------
SPANISH = Vocabulary(
    language="es",
    templates=(
        "debemos ^ apoyar a los {count} agricultores de nuestras regiones",
        "este informe ^ fue aprobado por el {percent} de los diputados en {year}",
        "nuestro grupo ^ celebra la propuesta del {person} sobre el presupuesto",
        "hoy ^ debatimos un presupuesto de {amount} para el próximo año",
        "la Comisión ^ prometió {amount} a las regiones más pobres en {year}",
        "necesitamos ^ una respuesta clara del {person} antes de la votación",
        "este Parlamento ^ votó a favor del acuerdo en {year}",
        "el desempleo ^ subió un {percent} entre los jóvenes el año pasado",
        "más de {count} empleos ^ se perdieron en la industria del acero",
        "quiero ^ dar las gracias al {person} por su excelente cooperación",
        "nuestros ciudadanos ^ esperan resultados y no más promesas",
        "hemos ^ esperado esta directiva desde {year}",
        "el {person} ^ ha planteado una pregunta muy importante",
        "es ^ un asunto urgente para {count} pequeñas empresas",
        "el Consejo ^ debe respetar la posición de la comisión",
        "en {year} ^ acordamos reducir las emisiones un {percent}",
        "el fondo ^ ayudará a {count} familias en toda la Unión",
        "este acuerdo ^ cubre el {percent} del comercio mundial",
        "{small} Estados miembros ^ todavía no han ratificado el tratado",
        "la Unión ^ gastó {amount} en ayuda humanitaria en {year}",
    ),
    openers=(
        ("Gracias.", "Gracias."),
        ("Gracias, señora Presidenta.", "Gracias, señora Presidenta."),
        ("Señora Presidenta,", "Señora Presidenta,"),
        ("Señor Presidente,", "Sr. Presidente,"),
        ("Señorías,", "Señorías,"),
        ("Señor Comisario,", "Sr. Comisario,"),
    ),
    tails=("en esta Cámara", "en este Parlamento", "para nuestros ciudadanos", "una vez más"),
    closers=("Gracias.", "Muchas gracias.", "Les doy las gracias."),
    adverbs=("por supuesto", "sin duda", "también", "por tanto", "claramente", "realmente", "creo"),
    lexicon={
        "debemos": ("deberíamos",),
        "apoyar": ("ayudar",),
        "agricultores": ("productores",),
        "regiones": ("zonas",),
        "informe": ("estudio",),
        "diputados": ("miembros",),
        "propuesta": ("moción",),
        "presupuesto": ("gasto",),
        "respuesta": ("reacción",),
        "votación": ("decisión",),
        "acuerdo": ("tratado",),
        "jóvenes": ("mayores",),
        "empleos": ("puestos",),
        "industria": ("sector",),
        "excelente": ("estrecha",),
        "ciudadanos": ("vecinos",),
        "resultados": ("hechos",),
        "promesas": ("palabras",),
        "directiva": ("norma",),
        "importante": ("seria",),
        "urgente": ("grave",),
        "empresas": ("firmas",),
        "posición": ("opinión",),
        "emisiones": ("pérdidas",),
        "familias": ("personas",),
        "comercio": ("mercado",),
        "tratado": ("pacto",),
        "humanitaria": ("exterior",),
    },
    fillers=_fillers(
        spanish_words,
        spanish_words,
        _grouped("."),
        _es_amount,
        "por ciento",
        (("señor", "Sr."),),  # templates put "del" / "al" / "el" before a person: masculine titles only
        ("comisario", "ministro", "presidente"),
        ("García", "Martínez", "López", "Sánchez", "Romero", "Navarro", "Torres", "Ruiz", "Moreno", "Castro"),
    ),
    thanks="Gracias",
    digits=_grouped("."),
)

FRENCH = Vocabulary(
    language="fr",
    templates=(
        "nous devons ^ soutenir les {count} agriculteurs de nos régions",
        "ce rapport ^ a été adopté par {percent} des députés en {year}",
        "notre groupe ^ salue la proposition de {person} sur le budget",
        "aujourd'hui nous ^ débattons d'un budget de {amount} pour l'année prochaine",
        "la Commission ^ a promis {amount} aux régions les plus pauvres en {year}",
        "nous attendons ^ une réponse claire de {person} avant le vote",
        "ce Parlement ^ a voté pour l'accord en {year}",
        "le chômage ^ a augmenté de {percent} chez les jeunes l'an dernier",
        "plus de {count} emplois ^ ont été perdus dans la sidérurgie",
        "je voudrais ^ remercier {person} pour son excellente coopération",
        "nos citoyens ^ attendent des résultats et non des promesses",
        "nous attendons ^ cette directive depuis {year}",
        "{person} ^ a posé une question très importante",
        "c'est ^ une question urgente pour {count} petites entreprises",
        "le Conseil ^ doit respecter la position de la commission",
        "en {year} nous ^ avons décidé de réduire les émissions de {percent}",
        "le fonds ^ aidera {count} familles dans toute l'Union",
        "cet accord ^ couvre {percent} du commerce mondial",
        "{small} États membres ^ n'ont pas encore ratifié le traité",
        "l'Union ^ a consacré {amount} à l'aide humanitaire en {year}",
    ),
    openers=(
        ("Merci.", "Merci."),
        ("Merci, Madame la Présidente.", "Merci, Madame la Présidente."),
        ("Madame la Présidente,", "Madame la Présidente,"),
        ("Monsieur le Président,", "Monsieur le Président,"),
        ("Chers collègues,", "Chers collègues,"),
        ("Monsieur le Commissaire,", "Monsieur le Commissaire,"),
    ),
    tails=("dans cette Assemblée", "dans ce Parlement", "pour nos citoyens", "une fois de plus"),
    closers=("Merci.", "Merci beaucoup.", "Je vous remercie."),
    adverbs=("bien sûr", "en effet", "aussi", "donc", "clairement", "vraiment", "certainement", "je crois"),
    lexicon={
        "devons": ("pouvons",),
        "soutenir": ("aider",),
        "agriculteurs": ("producteurs",),
        "régions": ("zones",),
        "rapport": ("texte",),
        "députés": ("membres",),
        "proposition": ("motion",),
        "budget": ("financement",),
        "réponse": ("réaction",),
        "vote": ("scrutin",),
        "accord": ("traité",),
        "jeunes": ("seniors",),
        "emplois": ("postes",),
        "excellente": ("étroite",),
        "citoyens": ("électeurs",),
        "résultats": ("actes",),
        "promesses": ("paroles",),
        "directive": ("règle",),
        "importante": ("sérieuse",),
        "urgente": ("grave",),
        "entreprises": ("sociétés",),
        "position": ("opinion",),
        "émissions": ("déchets",),
        "familles": ("personnes",),
        "commerce": ("marché",),
        "traité": ("pacte",),
        "humanitaire": ("extérieure",),
    },
    fillers=_fillers(
        french_words,
        french_words,
        _grouped("\u00a0"),
        _fr_amount,
        "pour cent",
        (("monsieur", "M."), ("madame", "Mme")),
        ("la commissaire", "la ministre", "la présidente"),  # "de la ...": no "de le"
        ("Dupont", "Martin", "Bernard", "Durand", "Lefèvre", "Moreau", "Girard", "Roux", "Fournier", "Mercier"),
    ),
    thanks="Merci",
    digits=_grouped("\u00a0"),
)

GERMAN = Vocabulary(
    language="de",
    templates=(
        "wir müssen ^ die {count} Landwirte in unseren Regionen unterstützen",
        "dieser Bericht ^ wurde {year} von {percent} der Abgeordneten angenommen",
        "{person} ^ hat eine sehr wichtige Frage gestellt",
        "heute ^ beraten wir einen Haushalt von {amount} für das kommende Jahr",
        "die Kommission ^ hat den ärmsten Regionen {year} {amount} versprochen",
        "{person} ^ muss uns vor der Abstimmung eine klare Antwort geben",
        "dieses Parlament ^ hat {year} für das Abkommen gestimmt",
        "die Arbeitslosigkeit ^ stieg im letzten Jahr um {percent} bei jungen Menschen",
        "mehr als {count} Arbeitsplätze ^ gingen in der Stahlindustrie verloren",
        "{person} ^ hat den Bericht im Ausschuss vorgestellt",
        "unsere Bürger ^ erwarten Ergebnisse und keine weiteren Versprechen",
        "wir warten ^ seit {year} auf diese Richtlinie",
        "das ist ^ eine dringende Frage für {count} kleine Unternehmen",
        "der Rat ^ muss die Position des Ausschusses respektieren",
        "wir haben ^ {year} beschlossen die Emissionen um {percent} zu senken",
        "der Fonds ^ wird {count} Familien in der ganzen Union helfen",
        "dieses Abkommen ^ deckt {percent} des Welthandels ab",
        "{small} Mitgliedstaaten ^ haben den Vertrag noch nicht ratifiziert",
        "die Union ^ gab {year} {amount} für humanitäre Hilfe aus",
        "{person} ^ stimmt diesem Vorschlag voll und ganz zu",
    ),
    openers=(
        ("Danke.", "Danke."),
        ("Danke, Frau Präsidentin.", "Danke, Frau Präsidentin."),
        ("Frau Präsidentin,", "Frau Präsidentin,"),
        ("Herr Präsident,", "Herr Präsident,"),
        ("Meine Damen und Herren,", "Meine Damen und Herren,"),
        ("Herr Kommissar,", "Herr Kommissar,"),
    ),
    tails=("in diesem Haus", "in diesem Parlament", "für unsere Bürger", "noch einmal"),
    closers=("Danke.", "Vielen Dank.", "Ich danke Ihnen."),
    adverbs=("natürlich", "in der Tat", "auch", "daher", "eindeutig", "wirklich", "sicherlich", "ich glaube"),
    lexicon={  # keys lower case, as the generator looks words up; a capitalized word's substitute is capitalized
        "müssen": ("sollten",),
        "landwirte": ("erzeuger",),
        "regionen": ("gebiete",),
        "bericht": ("antrag",),
        "abgeordneten": ("mitglieder",),
        "wichtige": ("ernste",),
        "haushalt": ("etat",),
        "antwort": ("reaktion",),
        "abstimmung": ("entscheidung",),
        "abkommen": ("vertrag",),
        "jungen": ("älteren",),
        "arbeitsplätze": ("stellen",),
        "ausschuss": ("plenum",),
        "bürger": ("wähler",),
        "ergebnisse": ("taten",),
        "versprechen": ("worte",),
        "richtlinie": ("verordnung",),
        "dringende": ("ernste",),
        "unternehmen": ("betriebe",),
        "position": ("meinung",),
        "emissionen": ("abgase",),
        "familien": ("haushalte",),
        "vertrag": ("pakt",),
        "humanitäre": ("externe",),
        "vorschlag": ("plan",),
    },
    fillers=_fillers(
        german_words,
        _german_year,
        _grouped("."),
        _de_amount,
        "Prozent",
        (("Doktor", "Dr."),),
        ("Herr", "Frau", "Kommissar"),
        ("Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Hoffmann", "Koch"),
    ),
    thanks="Danke",
    digits=_grouped("."),
)

VOCABULARIES: dict[str, Vocabulary] = {"es": SPANISH, "fr": FRENCH, "de": GERMAN}
CALIB_LANGUAGES = ("en", *VOCABULARIES)


def vocabulary(language: str = "en") -> Vocabulary:
    """The generator's vocabulary for ``language`` (``en``, ``es``, ``fr``, ``de``).

    >>> vocabulary("en").language, vocabulary("de").thanks
    ('en', 'Danke')
    """
    if language == "en":
        return ENGLISH
    if language not in VOCABULARIES:
        raise ConfigError(
            f"no calibration vocabulary for language {language!r}; fix: use one of {', '.join(CALIB_LANGUAGES)}"
        )
    return VOCABULARIES[language]


def calib_normalizer(language: str = "en") -> str:
    """The normalizer a calibration set in ``language`` is located and mined with.

    >>> calib_normalizer("en"), calib_normalizer("fr")
    ('whisper', 'basic-fr')
    """
    vocabulary(language)  # an unknown language fails here
    return "whisper" if language == "en" else f"basic-{language}"
