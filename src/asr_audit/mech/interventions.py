"""Interventions on a hook site's output, as context managers that always remove their hooks.

* **projection ablation** (``kind="ablate"``): ``h - (h . b) b`` for every row ``b`` of an
  orthonormal basis (rank ``k``: the whole subspace is projected out); with a ``center`` ``c``,
  ``h - ((h - c) . b) b`` (mean ablation: the projection is set to that of ``c``, e.g. the
  other set's mean, instead of 0);
* **additive induction** (``kind="induce"``): ``h + alpha * v`` (``alpha = 0`` is the identity);
* **directional clamping** (``kind="clamp"``): for every row ``b`` of the orthonormal basis, the
  projection ``p = (h - c) . b`` is capped at ``limit``: ``h - max(p - limit, 0) b``. A position
  whose projections all lie at or below ``limit`` is returned bit-identical, one above is moved
  onto the threshold along ``b`` only (a conditional mean ablation that leaves positions already
  on the faithful side alone); ``limit = +inf`` is the identity. With a ``trigger`` above the
  limit it is a *conditional* mean ablation: only a projection beyond ``trigger`` is moved, and
  it is moved all the way down to ``limit`` (``p > trigger -> limit``; the trigger defaults to the
  limit, which is the clamp).

Either applies at one or more sites (a site's activation is its module's forward output, the
first element when it returns a tuple; see :mod:`asr_audit.mech.sites`) and, optionally, only to
positions ``[f0, f1)`` of the sequence axis (encoder frames; decoder sites are stepped one token
at a time by cached decoding, so a frame range is refused there). A decoder site takes
``positions = (p0, p1)`` instead: absolute token positions (the prompt counts; position
``len(prompt) - 1`` is the one whose output predicts the first text token), read on every forward
from the backend's decoder position embedding (``decoder_position_module()``), so the same
positions are edited in one teacher-forced pass and in cached greedy decoding.
:attr:`Intervention.key` hashes kind, sites, vector / basis content, alpha, k, frames and
positions: results cached under it never mix with a clean run or another intervention.

A :class:`Gate` is the condition of conditional steering: a unit vector, a center and a threshold
read at one decoder site and position of an unedited pass; an intervention gated by it is applied
only to the clips it opens for (:mod:`asr_audit.mechrun.steer` evaluates it).

>>> iv = Intervention("induce", ("encoder.layers.1.out",), vector=(1.0, 0.0), alpha=0.0)
>>> iv.k, len(iv.key)
(0, 16)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError, require
from asr_audit.mech.hooks import forward_hooks, forward_pre_hooks
from asr_audit.mech.sites import parse_site

KINDS = ("ablate", "induce", "clamp")


def parse_positions(text: str) -> tuple[int, int]:
    """``"P0:P1"`` (the CLI's ``--positions``, the spec's ``positions``) as ``(p0, p1)``.

    Raises ``ValueError`` naming the expected form when ``text`` is not ``P0:P1`` with
    ``0 <= P0 < P1``; callers word it for their surface.
    """
    p0, sep, p1 = text.partition(":")
    if not sep or not p0.strip().isdigit() or not p1.strip().isdigit() or int(p0) >= int(p1):
        raise ValueError("expected P0:P1 with 0 <= P0 < P1 (e.g. 1:2)")
    return int(p0), int(p1)


@dataclass(frozen=True, slots=True)
class Intervention:
    """What to do at which sites; ``label`` names the arm in tables (``ablate``, ``random-0``, ...)."""

    kind: str
    sites: tuple[str, ...]
    vector: tuple[float, ...] = ()  # induction: added as alpha * vector
    basis: tuple[tuple[float, ...], ...] = ()  # ablation: orthonormal rows projected out
    alpha: float = 1.0
    frames: tuple[int, int] | None = None
    label: str = ""
    center: tuple[float, ...] = ()  # ablation: the point whose projection is kept (default: 0)
    limit: float = float("inf")  # clamp: the most (h - center) . b may be along each basis row
    trigger: float | None = None  # clamp: only projections above this move (to limit); None: the limit
    positions: tuple[int, int] | None = None  # decoder sites: only absolute token positions [p0, p1)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown intervention {self.kind!r}; valid: {', '.join(KINDS)}")
        if not self.sites:
            raise ConfigError("an intervention needs at least one site")
        for s in self.sites:
            stack, _, _ = parse_site(s)
            if self.frames is not None and stack == "decoder":
                raise ConfigError(f"a frame range applies to encoder sites only, not {s!r}; fix: drop --frames")
            if self.positions is not None and stack != "decoder":
                raise ConfigError(f"token positions apply to decoder sites only, not {s!r}; fix: use frames there")
        if self.kind in ("ablate", "clamp") and not self.basis:
            raise ConfigError(f"{'ablation' if self.kind == 'ablate' else 'clamping'} needs a basis (a direction)")
        if self.kind == "clamp" and (np.isnan(self.limit) or self.limit == -np.inf):
            raise ConfigError(f"clamp limit {self.limit!r} must be a number or +inf")
        if self.trigger is not None and (np.isnan(self.trigger) or not self.trigger >= self.limit):
            raise ConfigError(
                f"clamp trigger {self.trigger!r} must be at or above the limit {self.limit!r} "
                "(a position is only ever moved down); fix: raise the trigger"
            )
        if self.kind == "induce" and not self.vector:
            raise ConfigError("induction needs a vector (a direction)")
        if self.positions is not None and not 0 <= self.positions[0] < self.positions[1]:
            raise ConfigError(f"token positions {self.positions} need 0 <= p0 < p1")
        if self.frames is not None and not 0 <= self.frames[0] < self.frames[1]:
            raise ConfigError(f"frame range {self.frames} needs 0 <= f0 < f1")
        if not np.isfinite(self.alpha):
            raise ConfigError(f"alpha {self.alpha!r} must be finite")

    @classmethod
    def ablation(
        cls,
        sites: Sequence[str],
        basis: np.ndarray,
        *,
        frames: tuple[int, int] | None = None,
        label: str = "ablate",
        center: np.ndarray | None = None,
        positions: tuple[int, int] | None = None,
    ) -> Intervention:
        """Project out the rows of ``basis`` (orthonormalized here, so any full-rank rows do);
        with ``center``, set the projection to ``center``'s instead of 0."""
        b = np.atleast_2d(np.asarray(basis, dtype=np.float64))
        q, r = np.linalg.qr(b.T)
        if np.any(np.abs(np.diag(r)) < 1e-12):
            raise ConfigError("the ablation basis is rank-deficient (a zero or repeated direction)")
        c = () if center is None else tuple(float(x) for x in np.asarray(center, dtype=np.float64).reshape(-1))
        if c and len(c) != b.shape[1]:
            raise ConfigError(f"the ablation center has width {len(c)} but the basis {b.shape[1]}")
        return cls(
            "ablate",
            tuple(sites),
            basis=tuple(tuple(map(float, row)) for row in q.T),
            frames=frames,
            label=label,
            center=c,
            positions=positions,
        )

    @classmethod
    def clamping(
        cls,
        sites: Sequence[str],
        basis: np.ndarray,
        limit: float,
        *,
        center: np.ndarray | None = None,
        trigger: float | None = None,
        frames: tuple[int, int] | None = None,
        label: str = "clamp",
        positions: tuple[int, int] | None = None,
    ) -> Intervention:
        """Cap ``(h - center) . b`` at ``limit`` for every row ``b`` of ``basis`` (orthonormalized
        here); positions at or below the threshold are left untouched. With ``trigger`` (>= limit)
        only projections above the trigger move, down to ``limit``."""
        base = cls.ablation(sites, basis, frames=frames, label=label, center=center, positions=positions)
        # the sign matters here (a cap, not a projection): orient each orthonormal row like its input row
        q, b = np.asarray(base.basis), np.atleast_2d(np.asarray(basis, dtype=np.float64))
        q = q * np.where(np.einsum("ij,ij->i", q, b) < 0, -1.0, 1.0)[:, None]
        return cls(
            "clamp",
            base.sites,
            basis=tuple(tuple(map(float, row)) for row in q),
            frames=frames,
            label=label,
            center=base.center,
            limit=float(limit),
            trigger=None if trigger is None else float(trigger),
            positions=positions,
        )

    @classmethod
    def induction(
        cls,
        sites: Sequence[str],
        vector: np.ndarray,
        alpha: float,
        *,
        frames: tuple[int, int] | None = None,
        label: str = "induce",
        positions: tuple[int, int] | None = None,
    ) -> Intervention:
        """Add ``alpha * vector``."""
        v = tuple(float(x) for x in np.asarray(vector, dtype=np.float64).reshape(-1))
        return cls(
            "induce", tuple(sites), vector=v, alpha=float(alpha), frames=frames, label=label, positions=positions
        )

    @property
    def k(self) -> int:
        return len(self.basis)

    @property
    def key(self) -> str:
        """Content hash of everything that changes outputs (not the label)."""
        payload = {
            "kind": self.kind,
            "sites": list(self.sites),
            "vector": hashlib.sha256(np.asarray(self.vector, np.float64).tobytes()).hexdigest(),
            "basis": hashlib.sha256(np.asarray(self.basis, np.float64).tobytes()).hexdigest(),
            "alpha": self.alpha,
            "k": self.k,
            "frames": list(self.frames) if self.frames else None,
        }
        if self.center:  # absent for plain ablation: keys made before centers existed stay valid
            payload["center"] = hashlib.sha256(np.asarray(self.center, np.float64).tobytes()).hexdigest()
        if self.positions is not None:  # absent when unset: keys made before positions existed stay valid
            payload["positions"] = list(self.positions)
        if self.kind == "clamp":  # absent otherwise: keys of the other kinds stay as they were
            payload["limit"] = repr(float(self.limit))
            if self.trigger is not None:  # absent for the plain clamp
                payload["trigger"] = repr(float(self.trigger))
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def is_decoder_side(self) -> bool:
        """Whether every site is in the decoder (then encoder states can be reused across arms)."""
        return all(parse_site(s)[0] == "decoder" for s in self.sites)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "sites": list(self.sites),
            "alpha": self.alpha if self.kind == "induce" else None,
            "k": self.k if self.kind in ("ablate", "clamp") else None,
            "frames": list(self.frames) if self.frames else None,
            "centered": bool(self.center),
            **({"positions": list(self.positions)} if self.positions is not None else {}),
            "key": self.key,
        } | (self._clamp_dict() if self.kind == "clamp" else {})

    def _clamp_dict(self) -> dict[str, float | None]:
        def num(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {"limit": num(self.limit), "trigger": num(self.trigger if self.trigger is not None else self.limit)}


@dataclass(frozen=True, slots=True)
class Gate:
    """A per-clip condition read from the model's own activation (conditional activation steering):
    open iff ``(h - center) . vector > threshold``, where ``h`` is the output of decoder site
    ``site`` at absolute token position ``position`` in an *unedited* teacher-forced pass on the
    prompt alone (``None``: the position that predicts the first text token, ``len(prompt) - 1``).
    ``vector`` is a unit vector; ``center`` empty means the origin. Pure: evaluating it on a
    backend is :func:`asr_audit.mechrun.steer.gate_scores`.

    >>> g = Gate("decoder.layers.1.out", (1.0, 0.0), (0.5, 0.0), 0.25)
    >>> g.opens(np.array([1.0, 3.0])), g.opens(np.array([0.6, -3.0]))
    (True, False)
    """

    site: str
    vector: tuple[float, ...]
    center: tuple[float, ...] = ()
    threshold: float = 0.0
    position: int | None = None
    label: str = ""

    def __post_init__(self) -> None:
        stack, _, _ = parse_site(self.site)
        if stack != "decoder":
            raise ConfigError(f"gate site {self.site!r} is not a decoder site; fix: gate on decoder.layers.<i>.out")
        v = np.asarray(self.vector, np.float64)
        if v.ndim != 1 or not len(v) or not np.all(np.isfinite(v)):
            raise ConfigError("gate vector must be a non-empty finite vector; fix: use a direction's unit vector")
        if abs(float(np.linalg.norm(v)) - 1.0) > 1e-6:
            raise ConfigError(f"gate vector has norm {np.linalg.norm(v):.6g}, not 1; fix: divide it by its norm")
        if self.center and (len(self.center) != len(v) or not np.all(np.isfinite(self.center))):
            raise ConfigError(
                f"gate center has width {len(self.center)} but the vector {len(v)} (or is not finite); "
                "fix: use the mean of the same site's activations"
            )
        if not np.isfinite(self.threshold):
            raise ConfigError(
                f"gate threshold {self.threshold!r} must be a finite number; fix: give a projection value"
            )
        if self.position is not None and (isinstance(self.position, bool) or self.position < 0):
            raise ConfigError(f"gate position {self.position!r} must be an absolute token position >= 0")

    @classmethod
    def between(
        cls, site: str, mean_open: np.ndarray, mean_closed: np.ndarray, *, position: int | None = None, label: str = ""
    ) -> Gate:
        """The midpoint gate of two sets' means: vector ``(mean_open - mean_closed) / |.|``, center
        ``mean_closed``, threshold half the gap ``|mean_open - mean_closed| / 2``."""
        a, b = np.asarray(mean_open, np.float64).reshape(-1), np.asarray(mean_closed, np.float64).reshape(-1)
        d = a - b
        n = float(np.linalg.norm(d))
        if not n > 0:
            raise ConfigError("the gate's two means coincide (no direction); fix: use two different sets")
        return cls(
            site, tuple(map(float, d / n)), tuple(map(float, b)), threshold=n / 2, position=position, label=label
        )

    def score(self, h: np.ndarray) -> float:
        """``(h - center) . vector`` of one activation ``h`` (width of the vector)."""
        x = np.asarray(h, np.float64).reshape(-1)
        if len(x) != len(self.vector):
            raise ConfigError(f"gate at {self.site}: activation width {len(x)} but the vector has {len(self.vector)}")
        c = np.asarray(self.center, np.float64) if self.center else 0.0
        return float((x - c) @ np.asarray(self.vector, np.float64))

    def opens(self, h: np.ndarray) -> bool:
        """Whether the gate is open for a clip whose gate activation is ``h``."""
        return self.score(h) > self.threshold

    @property
    def key(self) -> str:
        """Content hash of site, position, vector, center and threshold (not the label)."""
        payload = {
            "site": self.site,
            "position": self.position,
            "vector": hashlib.sha256(np.asarray(self.vector, np.float64).tobytes()).hexdigest(),
            "center": hashlib.sha256(np.asarray(self.center, np.float64).tobytes()).hexdigest(),
            "threshold": repr(float(self.threshold)),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "site": self.site,
            "position": self.position,
            "threshold": float(self.threshold),
            "centered": bool(self.center),
            "key": self.key,
        }


def _first(output: Any) -> Any:
    return output[0] if isinstance(output, tuple) else output


def _replace_first(output: Any, new: Any) -> Any:
    return (new, *output[1:]) if isinstance(output, tuple) else new


def edit_fn(iv: Intervention) -> Any:
    """The tensor edit ``h -> h'`` of ``iv`` (over the last axis; ``frames`` on axis 1)."""
    torch = require("torch", "torch")
    basis = np.asarray(iv.basis, dtype=np.float64)
    vector = np.asarray(iv.vector, dtype=np.float64)
    center = np.asarray(iv.center, dtype=np.float64)

    def edit(h: Any) -> Any:
        if iv.kind == "clamp":
            b = torch.as_tensor(basis, dtype=h.dtype, device=h.device)
            p = (h - torch.as_tensor(center, dtype=h.dtype, device=h.device)) @ b.T if iv.center else h @ b.T
            over = p > (iv.limit if iv.trigger is None else iv.trigger)
            excess = torch.where(over, p - iv.limit, torch.zeros_like(p))
            new = torch.where(over.any(-1, keepdim=True), h - excess @ b, h)
        elif iv.kind == "ablate":
            b = torch.as_tensor(basis, dtype=h.dtype, device=h.device)
            if iv.center:
                c = torch.as_tensor(center, dtype=h.dtype, device=h.device)
                new = h - ((h - c) @ b.T) @ b
            else:
                new = h - (h @ b.T) @ b
        else:
            v = torch.as_tensor(vector, dtype=h.dtype, device=h.device)
            new = h + iv.alpha * v
        if iv.frames is None:
            return new
        f0, f1 = iv.frames
        out = h.clone()
        out[:, f0:f1] = new[:, f0:f1]
        return out

    return edit


@contextmanager
def intervene(backend: Any, interventions: Intervention | Sequence[Intervention]) -> Iterator[None]:
    """While active, every intervention edits its sites' outputs on ``backend`` (hooks removed on exit)."""
    ivs = [interventions] if isinstance(interventions, Intervention) else list(interventions)
    with _stack(backend, ivs):
        yield


@contextmanager
def _stack(backend: Any, ivs: list[Intervention]) -> Iterator[None]:
    if not ivs:
        yield
        return
    iv, rest = ivs[0], ivs[1:]
    modules = [backend.site_module(s) for s in iv.sites]
    width = len(iv.vector) if iv.kind == "induce" else len(iv.basis[0])  # ablate, clamp: the basis
    edit = edit_fn(iv)
    now: dict[str, Any] = {}  # positions: the current forward's absolute token positions, (batch, seq)

    def hook(module: Any, args: Any, output: Any) -> Any:
        h = _first(output)
        if h.shape[-1] != width:
            raise ConfigError(
                f"intervention {iv.label or iv.kind}: site width {h.shape[-1]} but the direction has {width}; "
                "fix: use a direction made at this site of this model"
            )
        if iv.positions is None:
            return _replace_first(output, edit(h))
        pos = now.get("ids")
        if pos is None or tuple(pos.shape) != tuple(h.shape[:2]):
            raise ConfigError(
                f"intervention {iv.label or iv.kind}: no token positions for a {tuple(h.shape[:2])} forward "
                "(the decoder position embedding did not run first); fix: drop the positions"
            )
        p0, p1 = iv.positions
        inside = ((pos >= p0) & (pos < p1)).to(h.device)[..., None]
        return _replace_first(output, h.where(~inside, edit(h)))

    if iv.positions is None:
        with forward_hooks(modules, hook), _stack(backend, rest):
            yield
        return
    source = getattr(backend, "decoder_position_module", None)
    if source is None:
        raise ConfigError(
            f"intervention {iv.label or iv.kind}: token positions need a backend with a decoder position "
            "embedding (decoder_position_module); fix: drop the positions"
        )

    def note(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        now["ids"] = _position_ids(args, kwargs)

    with forward_pre_hooks([source()], note), forward_hooks(modules, hook), _stack(backend, rest):
        yield


def _position_ids(args: Any, kwargs: dict[str, Any]) -> Any:
    """Absolute token positions (batch, seq) of a call ``embed_positions(input_ids, cache_length=..,
    position_ids=..)`` (transformers >= 5; ``past_key_values_length`` before), read from its arguments."""
    torch = require("torch", "torch")
    ids = kwargs.get("position_ids")
    if ids is None and len(args) > 2:
        ids = args[2]
    x: Any = args[0] if args else kwargs.get("input_ids", kwargs.get("inputs_embeds"))
    if x is None:
        raise ConfigError("the decoder position embedding was called without inputs; fix: drop the positions")
    if ids is not None:
        return ids if ids.dim() == 2 else ids.reshape(1, -1).expand(x.shape[0], -1)
    offset = kwargs.get("cache_length", kwargs.get("past_key_values_length", args[1] if len(args) > 1 else 0))
    n = torch.arange(x.shape[1], device=x.device) + int(offset)
    return n[None, :].expand(x.shape[0], -1)


@contextmanager
def recording(backend: Any, sites: Sequence[str], sink: Any) -> Iterator[None]:
    """While active, ``sink(site, tensor)`` receives each site's output (detached) on every forward."""
    modules = {s: backend.site_module(s) for s in sites}
    by_module = {id(m): s for s, m in modules.items()}
    if len(by_module) != len(modules):
        raise ConfigError("two recorded sites share one module; fix: record each site once")

    def hook(module: Any, args: Any, output: Any) -> None:
        sink(by_module[id(module)], _first(output).detach())

    with forward_hooks(list(modules.values()), hook):
        yield


@contextmanager
def replacing(backend: Any, site: str, value: Any, frames: tuple[int, int] | None = None) -> Iterator[None]:
    """While active, site ``site`` outputs ``value`` (same shape; only positions ``frames`` when given)
    instead of what it computed: activation patching."""

    def hook(module: Any, args: Any, output: Any) -> Any:
        h = _first(output)
        v = value.to(h.device, h.dtype)
        if v.shape != h.shape:
            raise ConfigError(f"patch for {site}: shape {tuple(v.shape)} but the site gives {tuple(h.shape)}")
        if frames is None:
            return _replace_first(output, v.clone())
        out = h.clone()
        out[:, frames[0] : frames[1]] = v[:, frames[0] : frames[1]]
        return _replace_first(output, out)

    with forward_hooks([backend.site_module(site)], hook):
        yield
