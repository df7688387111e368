"""Trigger-battery conditions: a small grammar over the audio transforms and voices.

A condition is one or more *atoms* joined with ``+`` and applied left to right::

    original | full                 the clip as it is (always measured, the paired baseline)
    noise:10db                      white noise at 10 dB SNR
    noise:pink:5db                  pink / white / babble (other clips of the corpus) noise
    reverb:0.6                      a simulated room with a measured RT60 of 0.6 s
    truncate:1w0.25s                cut to the probed span +-1 aligned word +-0.25 s
    donor:conv8s  donor:bench8s     append 8 s of a conversational / benchmark donor (0.3 s gap)
    donor:bench8s:prepend           ... or put it before the clip
    voice:flite-slt                 re-synthesize the spoken text with a TTS voice

``voice:flite-kal+reverb:0.6`` re-voices then reverberates. A voice must come first; a truncation
must come before a donor (it needs word timings of the unspliced audio). Noise and reverberation
keep the length and the timing, so they may come anywhere. Each atom kind is one entry of
:data:`CONDITION_KINDS` (its parser and the transform it adds).

>>> parse_condition("voice:flite-kal+reverb:0.6").name
'voice:flite-kal+reverb:0.6'
>>> [a.kind for a in parse_condition("noise:pink:5db").atoms], parse_condition("noise:10db").atoms[0].params
(['noise'], (('kind', 'white'), ('snr_db', 10.0)))
>>> parse_condition("truncate:1w0.25s").atoms[0].params
(('k', 1), ('pad', 0.25))
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from asr_audit.align import get_aligner
from asr_audit.audio.io import SAMPLE_RATE, load_audio
from asr_audit.audio.noise import AddNoise
from asr_audit.audio.reverb import Reverb
from asr_audit.audio.spans import Splice, truncate_words
from asr_audit.audio.transforms import clip_seed
from asr_audit.audio.voices import available_voices
from asr_audit.corpus.clips import Clip
from asr_audit.errors import ConfigError
from asr_audit.probes.battery.recipe import ClipsAsset, Realized, SpeechAsset, build, recipe_for, voice_clip
from asr_audit.registry import Registry

ORIGINAL = "original"
NOISE_KINDS = ("white", "pink", "babble")
DONOR_KINDS = ("conv", "bench")
DONOR_GAP_S = 0.3
BENCH_GAP_S = 0.2  # silence after each clip of a benchmark donor
GRAMMAR = (
    "original | noise:<snr>db | noise:<white|pink|babble>:<snr>db | reverb:<rt60 s> | "
    "truncate:<k>w<pad>s | donor:<conv|bench><seconds>s[:prepend] | voice:<name>; "
    "join atoms with '+', e.g. voice:flite-kal+reverb:0.6"
)

# Stand-in for a conversational recording when none is given (--donor-conv): spontaneous-style
# speech with fillers and restarts, synthesized with a generic voice.
CONVERSATION_TEXT = (
    "yeah so I was gonna say, um, we went over there on Saturday and it was, like, totally packed. "
    "and then my brother calls me, right, and he's like, where are you guys? and I'm like, "
    "I don't know, man, somewhere near the parking lot I think. anyway we got pizza after that."
)
CONVERSATION_VOICES = ("flite-rms", "espeak-en-us", "flite-awb", "flite-slt", "festival-kal")


@dataclass(frozen=True, slots=True)
class Atom:
    """One parsed atom: ``kind`` plus its parameters as sorted ``(name, value)`` pairs."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    text: str

    def get(self, name: str) -> Any:
        return dict(self.params)[name]


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed condition: its canonical name and atoms in application order."""

    name: str
    atoms: tuple[Atom, ...] = ()

    @property
    def voice(self) -> str | None:
        return next((a.get("voice") for a in self.atoms if a.kind == "voice"), None)

    @property
    def donor(self) -> Atom | None:
        return next((a for a in self.atoms if a.kind == "donor"), None)

    @property
    def truncate(self) -> Atom | None:
        return next((a for a in self.atoms if a.kind == "truncate"), None)

    @property
    def is_original(self) -> bool:
        return not self.atoms

    def without(self, kind: str) -> Condition:
        """This condition minus its atoms of ``kind`` (``original`` when nothing is left)."""
        atoms = tuple(a for a in self.atoms if a.kind != kind)
        return Condition("+".join(a.text for a in atoms) or ORIGINAL, atoms)


def _bad(text: str, why: str) -> ConfigError:
    return ConfigError(f"condition {text!r}: {why}; grammar: {GRAMMAR}")


def _number(text: str, value: str, what: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise _bad(text, f"{what} {value!r} is not a number") from None
    if not np.isfinite(x):
        raise _bad(text, f"{what} must be finite")
    return x


def _fmt(x: float) -> str:
    return f"{x:g}"


def _parse_noise(text: str, rest: str) -> Atom:
    parts = rest.split(":")
    kind = parts[0] if len(parts) == 2 else "white"
    if len(parts) not in (1, 2) or kind not in NOISE_KINDS:
        raise _bad(text, f"noise takes [<{'|'.join(NOISE_KINDS)}>:]<snr>db")
    m = re.fullmatch(r"(-?[0-9.]+)\s*db", parts[-1])
    if not m:
        raise _bad(text, f"noise SNR {parts[-1]!r} must look like 10db")
    snr = _number(text, m.group(1), "SNR")
    canon = f"noise:{_fmt(snr)}db" if kind == "white" else f"noise:{kind}:{_fmt(snr)}db"
    return Atom("noise", (("kind", kind), ("snr_db", snr)), canon)


def _parse_reverb(text: str, rest: str) -> Atom:
    m = re.fullmatch(r"([0-9.]+)s?", rest)
    rt60 = _number(text, m.group(1), "RT60") if m else -1.0
    if not 0 < rt60 <= 5:
        raise _bad(text, "reverb takes an RT60 in (0, 5] seconds, e.g. reverb:0.6")
    return Atom("reverb", (("rt60", rt60),), f"reverb:{_fmt(rt60)}")


def _parse_truncate(text: str, rest: str) -> Atom:
    m = re.fullmatch(r"([0-9]+)w([0-9.]+)s", rest)
    if not m:
        raise _bad(text, "truncate takes <k>w<pad>s, e.g. truncate:1w0.25s")
    k, pad = int(m.group(1)), _number(text, m.group(2), "pad")
    return Atom("truncate", (("k", k), ("pad", pad)), f"truncate:{k}w{_fmt(pad)}s")


def _parse_donor(text: str, rest: str) -> Atom:
    m = re.fullmatch(r"(conv|bench)([0-9.]+)s(:append|:prepend)?", rest)
    if not m:
        raise _bad(text, "donor takes <conv|bench><seconds>s[:prepend], e.g. donor:conv8s")
    seconds = _number(text, m.group(2), "donor length")
    if seconds <= 0:
        raise _bad(text, "donor length must be > 0 s")
    pos = (m.group(3) or ":append")[1:]
    canon = f"donor:{m.group(1)}{_fmt(seconds)}s" + (":prepend" if pos == "prepend" else "")
    return Atom("donor", (("position", pos), ("seconds", seconds), ("source", m.group(1))), canon)


def _parse_voice(text: str, rest: str) -> Atom:
    name = text.strip().partition(":")[2].strip()  # voice names keep their case
    if not name:
        raise _bad(text, "voice needs a name, e.g. voice:flite-slt (see asr_audit.audio.available_voices())")
    return Atom("voice", (("voice", name),), f"voice:{name}")


def parse_atom(text: str) -> Atom:
    """One atom (see the module docstring); anything else raises :class:`ConfigError` with the grammar."""
    head, _, rest = text.strip().lower().partition(":")
    if head not in CONDITION_KINDS:
        raise _bad(text, f"unknown condition kind {head!r}")
    return CONDITION_KINDS.get(head).parse(text, rest)


def parse_condition(text: str) -> Condition:
    """``atom[+atom...]`` or ``original`` / ``full`` as a :class:`Condition`."""
    t = str(text).strip()
    if t.lower() in (ORIGINAL, "full", ""):
        return Condition(ORIGINAL)
    atoms = tuple(parse_atom(p) for p in t.split("+"))
    kinds = [a.kind for a in atoms]
    if "voice" in kinds[1:]:
        raise _bad(text, "a voice must be the first atom (it replaces the audio)")
    for kind in ("voice", "donor", "truncate"):
        if kinds.count(kind) > 1:
            raise _bad(text, f"{kind} appears twice")
    if "truncate" in kinds and "donor" in kinds and kinds.index("truncate") > kinds.index("donor"):
        raise _bad(text, "truncate must come before donor (it needs timings of the unspliced clip)")
    return Condition("+".join(a.text for a in atoms), atoms)


def parse_conditions(items: str | Sequence[str]) -> tuple[Condition, ...]:
    """A comma-separated string or a list; ``original`` comes first (added when missing), duplicates dropped."""
    raw = list(items.split(",") if isinstance(items, str) else items)
    if any(not str(p).strip() for p in raw) and len(raw) > 1:
        raise ConfigError(f"conditions {items!r} have an empty item; fix: e.g. noise:10db,reverb:0.6")
    out = {ORIGINAL: Condition(ORIGINAL)}
    for p in raw:
        c = parse_condition(p)
        out.setdefault(c.name, c)
    return tuple(out.values())


# --- realizing a condition on one clip -----------------------------------------------------------


@dataclass
class ConditionContext:
    """What realizing conditions needs beyond the clip: other clips, spoken texts, donors, timings.

    ``spoken`` maps clip id -> what the audio says when it differs from the reference (the planted
    opener). ``timings(clip, text)`` returns word timings ``(word, start, end)`` for ``text`` on the
    clip's audio (default: the PocketSphinx aligner). ``conv_donors`` are conversational donor
    recordings; without them a synthesized stand-in is used (see :data:`CONVERSATION_TEXT`).
    Every in-memory asset it builds is recorded in ``recipes`` (sha256 -> how to rebuild it), so
    that a lazily realized clip (a recipe) can be rebuilt wherever it is read.
    """

    clips: Sequence[Clip]
    seed: int = 0
    spoken: Mapping[str, str] = field(default_factory=dict)
    conv_donors: Sequence[Any] = ()  # AudioAsset
    timings: Callable[[Clip, str], Sequence[tuple[str, float, float]]] | None = None
    _cache: dict[str, Any] = field(default_factory=dict)
    recipes: dict[str, Any] = field(default_factory=dict)  # asset sha256 -> the AssetRecipe that rebuilds it

    def spoken_text(self, clip_id: str, reference: str) -> str:
        return self.spoken.get(clip_id, reference)

    def word_timings(self, clip: Clip, text: str) -> Sequence[tuple[str, float, float]]:
        key = f"t\x1f{clip.id}\x1f{text}"
        if key not in self._cache:
            if self.timings is None:
                aligner = self._cache.setdefault("aligner", get_aligner("sphinx"))
                words = aligner.align(load_audio(clip), text)
                self._cache[key] = [(w.word, w.start, w.end) for w in words]
            else:
                self._cache[key] = list(self.timings(clip, text))
        return self._cache[key]

    def conversational(self) -> list[Any]:
        if self.conv_donors:
            return list(self.conv_donors)
        if "conv" not in self._cache:
            have = available_voices()
            voice = next((v for v in CONVERSATION_VOICES if v in have), None)
            if voice is None:
                raise ConfigError(
                    "donor:conv needs a conversational recording; fix: pass --donor-conv FILE "
                    "or install flite (apt-get install flite) for the synthesized stand-in"
                )
            self._cache["conv"] = [self.asset(SpeechAsset(voice, CONVERSATION_TEXT, f"conv-{voice}"))]
        return self._cache["conv"]

    def asset(self, recipe: Any, built: Any = None) -> Any:
        """The :class:`~asr_audit.audio.assets.AudioAsset` of ``recipe`` (``built`` when the caller
        already has it), remembered so that a worker can rebuild it (:attr:`recipes`)."""
        asset = recipe.build() if built is None else built
        self.recipes.setdefault(asset.sha256, recipe)
        return asset

    def bench_donor(self, clip: Clip, seconds: float) -> Any:
        """Other clips of the corpus (not this sentence), seeded order, joined to at least ``seconds``."""

        others = [c for c in self.clips if c.id != clip.id and c.reference.strip() != clip.reference.strip()]
        if not others:
            raise ConfigError(
                "donor:bench needs at least two different sentences in the corpus; fix: use a larger corpus"
            )
        rng = np.random.default_rng(clip_seed(self.seed, "bench-donor\x1f" + clip.id))
        loaded, total, used = [], 0, []
        for i in rng.permutation(len(others)):
            x = load_audio(others[i])
            loaded.append(x)
            total += x.size
            used.append(others[i])
            if total >= seconds * SAMPLE_RATE:
                break
        digest = hashlib.sha256("\x1f".join(c.id for c in used).encode()).hexdigest()[:6]
        recipe = ClipsAsset(tuple(used), f"bench-{digest}", BENCH_GAP_S)
        return self.asset(recipe, recipe.join(loaded))

    def babble(self, clip: Clip) -> tuple[Any, ...]:
        others = [c for c in self.clips if c.id != clip.id][:6]
        if len(others) < 2:
            raise ConfigError("noise:babble needs at least 3 clips in the corpus; fix: use white or pink noise")
        return tuple(self.asset(ClipsAsset((c,), f"talker-{c.id}")) for c in others)


def realize(
    condition: Condition, clip: Clip, ctx: ConditionContext, span: tuple[int, int] | None = None, lazy: bool = False
) -> Realized:
    """``clip`` under ``condition``. ``span`` (word indices into the spoken text) is what a truncation
    keeps; a condition with ``truncate`` and no span raises :class:`ConfigError`.

    With ``lazy`` the audio is not built: the realized clip (and its donor part) carry a
    :class:`~asr_audit.probes.battery.recipe.RecipeSource` (the original clip, the voice, the
    transforms with their seed, how to rebuild their assets) that :func:`build` turns into the
    same samples wherever it runs; ``source_range`` is then unknown (``None``) and the provenance
    holds the voice only. What a recipe cannot defer is still done here: the assets (their
    content hashes name the derived clip), and a voiced clip's synthesis when a truncation needs
    its word timings.
    """

    if condition.is_original:
        return Realized(clip, condition.name, None)
    text = ctx.spoken_text(clip.id, clip.reference)
    base = clip
    if condition.voice is not None:
        base = voice_clip(clip, condition.voice, text, synthesize=not lazy or condition.truncate is not None)
    steps = []
    for atom in condition.atoms:
        step = CONDITION_KINDS.get(atom.kind).step
        if step is not None:
            steps.append(step(atom, clip, base, ctx, span, condition.name))
    if lazy:
        return recipe_for(condition, clip, base, steps, clip_seed(ctx.seed, base.id), text, ctx.recipes)
    return build(condition, base, steps, clip_seed(ctx.seed, base.id))


# --- the atom kinds -------------------------------------------------------------------------------


def _noise_step(
    atom: Atom, clip: Clip, base: Clip, ctx: ConditionContext, span: tuple[int, int] | None, condition: str
) -> Any:
    kind = atom.get("kind")
    return AddNoise(kind, atom.get("snr_db"), ctx.babble(clip) if kind == "babble" else ())


def _reverb_step(
    atom: Atom, clip: Clip, base: Clip, ctx: ConditionContext, span: tuple[int, int] | None, condition: str
) -> Any:
    return Reverb(rt60=atom.get("rt60"))


def _truncate_step(
    atom: Atom, clip: Clip, base: Clip, ctx: ConditionContext, span: tuple[int, int] | None, condition: str
) -> Any:
    if span is None:
        raise ConfigError(
            f"condition {condition!r}: truncation needs a span to keep; "
            "fix: use it with a probe that names spans (refdis, courtesy)"
        )
    words = ctx.word_timings(base, ctx.spoken_text(clip.id, clip.reference))
    return truncate_words(words, span[0], span[1], atom.get("k"), atom.get("pad"), base.duration)


def _donor_step(
    atom: Atom, clip: Clip, base: Clip, ctx: ConditionContext, span: tuple[int, int] | None, condition: str
) -> Any:
    secs = atom.get("seconds")
    if atom.get("source") == "bench":
        asset = ctx.bench_donor(clip, secs)
    else:
        pool = ctx.conversational()
        asset = pool[int(np.random.default_rng(clip_seed(ctx.seed, "conv\x1f" + clip.id)).integers(len(pool)))]
    return Splice(asset, atom.get("position"), DONOR_GAP_S, secs)


StepBuilder = Callable[[Atom, Clip, Clip, ConditionContext, "tuple[int, int] | None", str], Any]


@dataclass(frozen=True, slots=True)
class ConditionKind:
    """One atom kind of the grammar: ``parse(text as written, text after 'kind:') -> Atom`` and
    ``step(atom, clip, base, ctx, span, condition name) -> Transform`` (``None``: the kind acts
    before the transform chain, as ``voice`` re-synthesizes the clip)."""

    name: str
    parse: Callable[[str, str], Atom]
    step: StepBuilder | None


CONDITION_KINDS: Registry[ConditionKind] = Registry("condition kind", fix=f"grammar: {GRAMMAR}")
CONDITION_KINDS.register("noise", ConditionKind("noise", _parse_noise, _noise_step))
CONDITION_KINDS.register("reverb", ConditionKind("reverb", _parse_reverb, _reverb_step))
CONDITION_KINDS.register("truncate", ConditionKind("truncate", _parse_truncate, _truncate_step))
CONDITION_KINDS.register("donor", ConditionKind("donor", _parse_donor, _donor_step))
CONDITION_KINDS.register("voice", ConditionKind("voice", _parse_voice, None))
