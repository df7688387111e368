"""Recipes: a battery condition's derived audio as a small description a Ray worker builds.

A realized clip (:func:`~asr_audit.probes.battery.conditions.realize`) normally holds its samples.
Realized with ``lazy=True`` it holds a :class:`RecipeSource` instead: the original clip (a path,
a URL, or audio that travels with it), the voice that re-speaks it, the condition's transforms
(:meth:`~asr_audit.audio.transforms.Transform.to_dict`: noise kind and SNR, RT60, truncation
window, splice position and length), the seed, and how to rebuild each in-memory asset the
transforms name by content hash (a benchmark donor from its clips, a babble talker from its clip,
a synthesized conversational donor from its voice and text; :data:`AssetRecipe`). Loading the
source runs :func:`build`, the code a local run realizes with, so the samples (and their hash,
the store key) are the local ones, bit for bit. :class:`Realized`, :func:`voice_clip` and
:func:`build` live here for that reason (``conditions`` imports this module, never the reverse).

A recipe is kilobytes where the audio it describes is megabytes; the Ray executor sends recipes
to its workers and builds there (``docs/scale.md``). A worker that cannot build one (no TTS, a
path it cannot see, a rebuilt asset whose hash differs) says so, and the driver builds it and
ships the samples.

>>> import numpy as np
>>> from asr_audit.corpus.clips import ArraySource, Clip
>>> from asr_audit.probes.battery.conditions import ConditionContext, parse_condition, realize
>>> t = np.arange(16000, dtype=np.float32) / 16000
>>> clip = Clip("a", "a tone", source=ArraySource((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000))
>>> ctx = ConditionContext([clip], seed=3)
>>> lazy = realize(parse_condition("noise:10db"), clip, ctx, lazy=True).clip
>>> eager = realize(parse_condition("noise:10db"), clip, ctx).clip
>>> lazy.id == eager.id and bool(np.array_equal(lazy.source.load()[0], eager.source.load()[0]))
True
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

import asr_audit
from asr_audit.audio.assets import AudioAsset
from asr_audit.audio.io import SAMPLE_RATE, load_audio
from asr_audit.audio.transforms import Chain, derive_clip, derived_id, jsonable, transform_from_dict
from asr_audit.audio.voices import get_voice, synthesis_key, synthesize
from asr_audit.audio.voices import synthesize as speak
from asr_audit.corpus.clips import ArraySource, Clip
from asr_audit.errors import ConfigError
from asr_audit.probes.audio.masked import Heard
from asr_audit.probes.core.probe import ModelPool
from asr_audit.store.base import Store
from asr_audit.store.sqlite import RECIPE_PREFIX
from asr_audit.store.transcribe import file_fingerprint

# Bump when a change to the code that builds derived audio (asr_audit.audio transforms, voices,
# the battery's conditions) can change its samples: recipe fingerprints of the old code then never
# match, so the store never serves a transcript of the old audio for the new.
RECIPE_VERSION = "1"

DONOR_SUFFIX = "__donor-only"  # the id of a splice's donor part, transcribed alone


@dataclass(frozen=True, slots=True)
class Realized:
    """One clip under one condition: the clip to transcribe and where the original sits in it."""

    clip: Clip
    condition: str
    source_range: tuple[int, int] | None  # samples of the original inside the audio (None = all of it)
    donor: Clip | None = None  # the donor audio exactly as spliced (to transcribe alone)
    provenance: Mapping[str, Any] = field(default_factory=dict)


def voice_clip(clip: Clip, voice: str, text: str, synthesize: bool = True) -> Clip:
    """``clip`` re-spoken by ``voice`` saying ``text`` (id ``<clip id>__voice-<voice>``). Without
    ``synthesize`` only its id and metadata: the audio is still ``clip``'s, a placeholder for a
    recipe that a worker synthesizes (:func:`~asr_audit.probes.battery.conditions.realize` with ``lazy``)."""

    tag = f"voice-{voice}"
    meta = dataclasses.replace(clip, id=f"{clip.id}__{tag}", speaker=voice, provenance=(*clip.provenance, tag))
    if not synthesize:
        get_voice(voice)  # an unknown voice fails here, as synthesizing it would
        return meta
    samples, sr = speak(voice, text)
    source = ArraySource(samples, sr, label=f"{voice}: {text[:40]}")
    return dataclasses.replace(meta, audio_path=None, source=source, duration=samples.size / sr)


def build(condition: Any, base: Clip, steps: Sequence[Any], seed: int | None) -> Realized:
    """The audio of ``condition`` on ``base`` (the clip, or its re-voiced form): ``steps`` (the
    condition's transforms) applied with ``seed``, and the donor part cut out of a splice. Used by
    :func:`~asr_audit.probes.battery.conditions.realize` and by :meth:`RecipeSource.build` wherever
    a recipe is loaded (the same code, hence the same samples)."""

    if not steps:
        return Realized(base, condition.name, None, provenance={"voice": condition.voice})
    new, derived = derive_clip(base, steps, seed)
    rng = derived.source_range if condition.donor is not None else None
    donor = None
    if condition.donor is not None:
        d0, d1 = next(m["donor_range"] for m in derived.measured if "donor_range" in m)
        donor = dataclasses.replace(
            new,
            id=new.id + DONOR_SUFFIX,
            provenance=(*new.provenance, "donor-only"),
            source=ArraySource(np.array(derived.samples[d0:d1]), derived.sr, "donor"),
            duration=(d1 - d0) / derived.sr,
        )
    return Realized(
        new,
        condition.name,
        rng if rng else None,
        donor,
        {"voice": condition.voice, **derived.provenance.to_dict()},
    )


@dataclass(frozen=True, slots=True)
class SpeechAsset:
    """A synthesized asset: ``voice`` saying ``text`` (the conversational donor's stand-in)."""

    voice: str
    text: str
    name: str

    def build(self) -> AudioAsset:
        samples, sr = synthesize(self.voice, self.text)
        return AudioAsset.from_samples(samples, sr, name=self.name)

    def map_clips(self, fn: Callable[[Clip], Clip]) -> SpeechAsset:
        return self


@dataclass(frozen=True, slots=True)
class ClipsAsset:
    """Clips' 16 kHz audio joined in order, each followed by ``gap`` s of silence (a benchmark
    donor); with ``gap`` ``None`` one clip's audio as it is (a babble talker)."""

    clips: tuple[Clip, ...]
    name: str
    gap: float | None = None

    def join(self, audio: Sequence[np.ndarray]) -> AudioAsset:
        """The asset from the clips' loaded audio (the caller's, when it has loaded it already)."""

        if self.gap is None:
            return AudioAsset.from_samples(audio[0], SAMPLE_RATE, name=self.name)
        silence = np.zeros(int(self.gap * SAMPLE_RATE), np.float32)
        return AudioAsset.from_samples(
            np.concatenate([part for x in audio for part in (x, silence)]), SAMPLE_RATE, name=self.name
        )

    def build(self) -> AudioAsset:
        return self.join([load_audio(c) for c in self.clips])

    def map_clips(self, fn: Callable[[Clip], Clip]) -> ClipsAsset:
        return dataclasses.replace(self, clips=tuple(fn(c) for c in self.clips))


@dataclass(frozen=True, slots=True)
class InlineAsset:
    """An asset no recipe describes (in-memory audio a caller passed in): it travels as samples."""

    asset: AudioAsset

    def build(self) -> AudioAsset:
        return self.asset

    def map_clips(self, fn: Callable[[Clip], Clip]) -> InlineAsset:
        return self


AssetRecipe = SpeechAsset | ClipsAsset | InlineAsset


@functools.lru_cache(maxsize=1)
def _code_versions() -> tuple[tuple[str, str], ...]:
    """The versions of what derived samples depend on, for recipe fingerprints."""
    from importlib import metadata

    out = [("asr-audit", asr_audit.__version__), ("recipe", RECIPE_VERSION)]
    for pkg in ("numpy", "scipy", "soxr", "pyroomacoustics"):
        try:
            out.append((pkg, metadata.version(pkg)))
        except metadata.PackageNotFoundError:
            pass
    return tuple(out)


@dataclass(frozen=True, slots=True, eq=False)
class RecipeSource:
    """Audio built from a recipe (see the module docstring): an :class:`~asr_audit.corpus.clips.AudioSource`.

    ``part`` is ``"clip"`` (the realized clip) or ``"donor"`` (a splice's donor part, as spliced).
    ``fingerprint`` (the store's recipe key, for skipping a build: :func:`_fingerprint`) is set only
    where the recipe pins its input cheaply: an original clip with a file fingerprint, or a voice
    whose engine is installed here (its synthesis key names the engine version and the text); it
    covers the transforms, the seed and :func:`_code_versions`.
    ``voice_key`` pins a voice: a process whose engine gives another key (or has none) refuses to
    build the recipe, so a worker with another TTS version never produces other samples.
    """

    clip: Clip
    condition: Any  # conditions.Condition
    text: str  # what the voice says (the spoken text); unused without a voice
    steps: tuple[Mapping[str, Any], ...]
    seed: int | None
    assets: tuple[tuple[str, AssetRecipe], ...]  # sha256 -> how to rebuild that asset
    part: str = "clip"
    label: str = "<recipe>"
    fingerprint: str | None = None
    voice_key: str | None = None  # the driver's synthesis key of the voice (engine version included)
    recipe: ClassVar[bool] = True

    def build(self) -> Any:
        """The realized clip(s), built here (:func:`~asr_audit.probes.battery.conditions.build`)."""

        voice = self.condition.voice
        if voice is not None and self.voice_key is not None and voice_key(voice, self.text) != self.voice_key:
            raise ConfigError(
                f"voice {voice!r}: the TTS engine here is not the driver's (another version, or none); "
                "fix: install the driver's engine version where the recipe is built"
            )
        base = self.clip if voice is None else voice_clip(self.clip, voice, self.text)
        assets = {sha: recipe.build() for sha, recipe in self.assets}
        steps = [transform_from_dict(step, assets) for step in self.steps]
        return build(self.condition, base, steps, self.seed)

    def load(self) -> tuple[np.ndarray, int]:
        realized = self.build()
        target = realized.donor if self.part == "donor" else realized.clip
        if target is None or target.source is None:
            raise ConfigError(f"recipe {self.label!r}: no {self.part} part; fix: report this as a bug")
        return target.source.load()

    def map_clips(self, fn: Callable[[Clip], Clip]) -> RecipeSource:
        """This recipe with ``fn`` applied to every clip it reads (the original and the assets' clips)."""
        return dataclasses.replace(
            self, clip=fn(self.clip), assets=tuple((sha, r.map_clips(fn)) for sha, r in self.assets)
        )

    def nbytes(self) -> int:
        """Pickled size: what travels to a worker."""
        import pickle

        return len(pickle.dumps(self, protocol=5))


def voice_key(voice: str, text: str) -> str | None:
    """What pins a voice's samples here: its synthesis key (voice definition, engine version, text),
    or ``None`` where this process has no engine for it."""

    v = get_voice(voice)
    return synthesis_key(v, text) if v.installed else None


def _assets_of(step: Any) -> list[AudioAsset]:
    out: list[AudioAsset] = []
    for f in dataclasses.fields(step):
        value = getattr(step, f.name)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, AudioAsset):
                out.append(v)
    return out


def _fingerprint(
    clip: Clip, vkey: str | None, steps: Sequence[Mapping[str, Any]], seed: int | None, part: str, voice: bool = False
) -> str | None:
    """The recipe key (the store's :data:`~asr_audit.store.sqlite.RECIPE_PREFIX` key) of a derived
    clip: what it is made from — the original clip's file fingerprint, or for a re-voiced clip the
    voice's synthesis key ``vkey`` (voice definition, engine version, text: what the TTS cache keys
    its samples by) — the transforms with their parameters, the seed, the part and
    :func:`_code_versions`; ``None`` where the input has no cheap identity (in-memory audio, a
    voice with no engine here)."""
    base = (None if vkey is None else f"voice:{vkey}") if voice else file_fingerprint(clip)
    if base is None:
        return None
    payload = {"base": base, "code": _code_versions(), "steps": steps, "seed": seed, "part": part}
    return RECIPE_PREFIX + hashlib.sha256(json.dumps(jsonable(payload), sort_keys=True).encode()).hexdigest()


def recipe_for(
    condition: Any,
    clip: Clip,
    base: Clip,
    steps: Sequence[Any],
    seed: int | None,
    text: str,
    recipes: Mapping[str, AssetRecipe],
) -> Any:
    """The lazy :class:`~asr_audit.probes.battery.conditions.Realized` of ``clip`` under ``condition``:
    the ids, provenance tags and voice a local realization gives, the audio as recipes.

    ``base`` is the clip the transforms apply to (``clip``, or its re-voiced form; its audio is
    not read here), ``steps`` the condition's transforms, ``recipes`` how to rebuild the in-memory
    assets they name (sha256 -> recipe; an asset without one travels as samples)."""

    chain = Chain(tuple(steps))
    dicts = tuple(step.to_dict() for step in chain.steps)
    assets: dict[str, AssetRecipe] = {}
    for step in chain.steps:
        for a in _assets_of(step):
            if a.path is None:
                assets.setdefault(a.sha256, recipes.get(a.sha256) or InlineAsset(a))
    voice = condition.voice
    vkey = None if voice is None else voice_key(voice, text)
    label = f"{base.audio_label} [{'+'.join(chain.tags)}]" if chain.steps else f"{voice}: {text[:40]}"
    source = RecipeSource(
        clip, condition, text, dicts, seed, tuple(assets.items()), "clip", label,
        _fingerprint(clip, vkey, dicts, seed, "clip", voice is not None), vkey,
    )  # fmt: skip
    new = dataclasses.replace(
        base,
        id=derived_id(base.id, chain),
        audio_path=None,
        source=source,
        duration=None,
        provenance=(*base.provenance, *chain.tags),
    )
    donor = None
    if condition.donor is not None:
        part = dataclasses.replace(
            source,
            part="donor",
            label=label + " donor",
            fingerprint=_fingerprint(clip, vkey, dicts, seed, "donor", voice is not None),
        )
        donor = dataclasses.replace(
            new, id=new.id + DONOR_SUFFIX, provenance=(*new.provenance, "donor-only"), source=part
        )
    return Realized(new, condition.name, None, donor, {"voice": voice})


def is_recipe(clip: Clip) -> bool:
    """Whether ``clip``'s audio is a recipe (built where it is loaded)."""
    return isinstance(clip.source, RecipeSource)


def built(clip: Clip) -> Clip:
    """``clip`` with its recipe built into samples (in-memory audio); any other clip as it is. What the
    build raises is the caller's (a Ray worker reports it, the driver raises it as a local run does)."""
    if not isinstance(clip.source, RecipeSource):
        return clip
    samples, sr = clip.source.load()
    return dataclasses.replace(clip, source=ArraySource(samples, sr, clip.source.label))


@dataclass(frozen=True, slots=True)
class Steps:
    """The condition of a recipe that only applies transforms (no voice, no donor, no truncation):
    what :func:`build` and :class:`RecipeSource` read of a condition. The masked probe's masked
    span is one (:func:`derived_recipe`)."""

    name: str
    voice: None = None
    donor: None = None
    truncate: None = None


def derived_recipe(clip: Clip, steps: Sequence[Any], seed: int | None) -> Clip:
    """``clip`` under the transforms ``steps`` with ``seed``, named as
    :func:`~asr_audit.audio.transforms.derive_clip` names it, its audio a recipe (``clip`` and the
    steps: a silenced span is a few hundred bytes) that :func:`build` turns into derive_clip's samples
    where it is loaded."""

    chain = Chain(tuple(steps))
    return recipe_for(Steps("+".join(chain.tags)), clip, clip, chain.steps, seed, "", {}).clip


def masked_recipes(clips: Sequence[Clip], plan: Any) -> list[Clip]:
    """The masked clips of a :class:`~asr_audit.probes.audio.masked.MaskPlan` over ``clips`` as recipes
    (each the original clip and its mask), with the plan's item ids; the masked samples the plan
    built on the driver are not sent."""
    by_id = {c.id: c for c in clips}
    out = []
    for r in plan.recipes:
        clip = derived_recipe(by_id[r.clip_id], r.provenance.chain().steps, r.provenance.seed)
        if clip.id != r.item_id:
            raise ConfigError(f"mask recipe {r.item_id!r} rebuilds as {clip.id!r}; fix: report this as a bug")
        out.append(clip)
    return out


def recipe_hearing(
    pool: ModelPool, models: Sequence[str], store: Store | None, sources: Mapping[str, Clip] | None = None
) -> Any:
    """The masked probe's transcription by the pool's ``models`` with the masked clips as recipes (a
    :data:`~asr_audit.probes.audio.masked.Hear`): every model's unmasked clips and masked recipes in
    one call, its results labelled with the model names. ``sources`` (clip id -> clip) replaces the
    corpus's clips in what is sent (the battery's degraded clips as recipes, whose samples were
    built here to plan the masks): a pool that runs its models elsewhere builds them there, a local
    pool where it reads them. A recipe built nowhere fails its clip with the driver's error."""

    def hear(plain: Any, corpus: Any, plan: Any) -> list[Heard]:
        send = [(sources or {}).get(c.id, c) for c in corpus]
        plain_ids = {c.id for c in plain}
        clips = [c for c in send if c.id in plain_ids] + masked_recipes(send, plan)
        answers = pool.transcribe(dict.fromkeys(models, clips), store)
        out = []
        for m in models:
            o = answers[m].outcome
            texts = {r.clip_id: r.hypothesis for r in o.records}
            fails = {**{f.clip_id: f.reason for f in o.failures}, **answers[m].unbuilt}
            clean, hidden = _split(texts, plain_ids)
            clean_fail, hidden_fail = _split(fails, plain_ids)
            out.append(Heard(m, o.backend_key, clean, clean_fail, hidden, hidden_fail))
        return out

    return hear


def _split(by_id: Mapping[str, str], ids: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """``by_id`` as (the entries of ``ids``, the others)."""
    return {k: v for k, v in by_id.items() if k in ids}, {k: v for k, v in by_id.items() if k not in ids}
