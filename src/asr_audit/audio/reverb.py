"""Reverberation with a room impulse response of known, *measured* RT60.

Simulated rooms use the pyroomacoustics image-source shoebox (extra ``audio``). Its Sabine
inversion misses the target (by several percent in our rooms, either way), so :func:`room_ir` searches the
wall absorption — a bracketed bisection, accelerated by an Eyring-rule step — until the RT60
*measured* on the simulated response is within ``tolerance`` (default 5 %) of the target.

RT60 is measured by :func:`measure_rt60`: Schroeder backward integration of the squared response
from the direct path, a least-squares line through the decay from -5 to -35 dB (T30),
extrapolated to 60 dB; T20 (-5 to -25 dB) when the response has less than the 45 dB of dynamic
range T30 needs (ISO 3382-1). A measured RIR from a file can have a noise
floor, which is cut first (the response is truncated where its 10 ms envelope meets the floor).

Simulated responses are cached on disk (``<cache>/rir/<key>.npz``, key = all parameters plus the
pyroomacoustics version) so every run uses the same response.

Applying a response: the output is aligned on the direct path (the dry speech keeps its timing,
so word timings stay valid), has the input's length (the reverberant tail past the end is
dropped) and, with ``keep_level``, the input's RMS.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from asr_audit.audio.assets import AudioAsset
from asr_audit.audio.dsp import TransformError, check_samples, fft_convolve, fmt_num, rms, scale_to_rms
from asr_audit.audio.spans import asset_label
from asr_audit.audio.transforms import Info, Transform, register_transform
from asr_audit.errors import ConfigError, require
from asr_audit.paths import cache_dir

Vec3 = tuple[float, float, float]
DEFAULT_ROOM: Vec3 = (5.0, 4.0, 3.0)
DEFAULT_SOURCE: Vec3 = (3.2, 2.4, 1.6)
DEFAULT_MIC: Vec3 = (1.5, 1.3, 1.4)
_ALGORITHM = 1  # bump when the search or measurement changes, to invalidate cached responses
_MEMO: dict[str, RoomIR] = {}


@dataclass(frozen=True, slots=True)
class Rt60:
    """A measured reverberation time: seconds, ``"T30"`` or ``"T20"``, and the decay range fitted."""

    seconds: float
    method: str
    fit_db: tuple[float, float]


def schroeder_db(ir: np.ndarray) -> np.ndarray:
    """Energy decay curve in dB: ``10 log10(sum_{k>=t} h[k]^2 / sum_k h[k]^2)`` (0 dB at t=0)."""
    energy = np.asarray(ir, dtype=np.float64) ** 2
    edc = np.cumsum(energy[::-1])[::-1]
    if edc.size == 0 or edc[0] <= 0:
        raise TransformError("the impulse response is silent; fix: use a response with signal")
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(edc / edc[0])


def _noise_floor_cut(ir: np.ndarray, sr: int) -> np.ndarray:
    """Truncate a measured response where its 10 ms envelope falls to the noise floor (+5 dB).

    The floor is the mean energy of the last 10 % of the response; a floor more than 90 dB below
    the envelope's peak is treated as no floor.
    """
    block = max(int(0.01 * sr), 1)
    e = np.asarray(ir, dtype=np.float64) ** 2
    nblocks = e.size // block
    if nblocks < 20:
        return ir
    env = e[: nblocks * block].reshape(nblocks, block).mean(axis=1)
    peak = env.max()
    tail = e[int(e.size * 0.9) :]
    floor = float(tail.mean()) if tail.size else 0.0
    if peak <= 0 or floor <= peak * 1e-9:
        return ir
    above = np.nonzero(env > floor * 10**0.5)[0]
    if above.size == 0:
        return ir
    return ir[: (int(above[-1]) + 1) * block]


def dynamic_range_db(ir: np.ndarray, sr: int) -> float:
    """Decay range available for a fit: the loudest 10 ms block over the mean of the last 10 %.

    ISO 3382-1 asks for at least 45 dB for T30 and 35 dB for T20; below that the Schroeder curve's
    end (where the response stops or meets its noise floor) bends the fit.
    """
    e = np.asarray(ir, dtype=np.float64) ** 2
    block = max(int(0.01 * sr), 1)
    nblocks = max(e.size // block, 1)
    peak = float(e[: nblocks * block].reshape(nblocks, -1).mean(axis=1).max()) if e.size >= block else float(e.mean())
    tail = float(e[-max(e.size // 10, block) :].mean())
    if peak <= 0:
        return 0.0
    return math.inf if tail <= 0 else 10.0 * math.log10(peak / tail)


def measure_rt60(ir: np.ndarray, sr: int, noise_floor: bool = False) -> Rt60:
    """RT60 by Schroeder integration from the direct path: T30 when the response has 45 dB of
    dynamic range, else T20 (35 dB); fewer raises :class:`TransformError`.

    ``noise_floor=True`` first cuts a measured response's noise floor (see :func:`_noise_floor_cut`).

    >>> sr = 16000; t = np.arange(sr) / sr
    >>> ir = np.random.default_rng(0).standard_normal(sr) * 10 ** (-3 * t / 0.5)  # RT60 0.5 s
    >>> round(measure_rt60(ir, sr).seconds, 2)
    0.5
    """
    h = np.asarray(ir, dtype=np.float64)
    if noise_floor:
        h = _noise_floor_cut(h, sr)
    h = h[int(np.argmax(np.abs(h))) if h.size else 0 :]  # integrate from the direct path
    edc = schroeder_db(h)
    available = dynamic_range_db(h, sr)
    for method, lo_db, hi_db, need_db in (("T30", -5.0, -35.0, 45.0), ("T20", -5.0, -25.0, 35.0)):
        if available < need_db:
            continue
        below = np.nonzero(edc <= hi_db)[0]
        if below.size == 0 or not np.isfinite(edc[below[0]]):
            continue
        i0, i1 = int(np.argmax(edc <= lo_db)), int(below[0])
        if i1 - i0 < 3:
            continue
        t = np.arange(i0, i1 + 1, dtype=np.float64) / sr
        slope, _ = np.polyfit(t, edc[i0 : i1 + 1], 1)
        if slope >= 0:
            continue
        return Rt60(float(-60.0 / slope), method, (lo_db, hi_db))
    raise TransformError(
        f"the impulse response has {available:.0f} dB of decay, too little to measure RT60 "
        "(T20 needs 35 dB); fix: use a longer response or one with a lower noise floor"
    )


@dataclass(frozen=True, slots=True, eq=False)
class RoomIR:
    """A simulated response with its target, measurement and search record."""

    ir: np.ndarray
    sr: int
    rt60_target: float
    rt60: Rt60
    absorption: float
    max_order: int
    iterations: int
    key: str


def _check_geometry(room: Vec3, source: Vec3, mic: Vec3) -> None:
    if len(room) != 3 or any(not (isinstance(v, (int, float)) and v > 0) for v in room):
        raise ConfigError(f"room must be 3 positive dimensions in metres, got {room!r}")
    for what, p in (("source", source), ("mic", mic)):
        if len(p) != 3 or any(not (0 < float(v) < float(d)) for v, d in zip(p, room)):
            raise ConfigError(f"{what} position {p!r} is not inside the room {room!r}")


def _cache_key(rt60: float, sr: int, room: Vec3, source: Vec3, mic: Vec3, tolerance: float, version: str) -> str:
    payload = json.dumps(
        {
            "rt60": rt60,
            "sr": sr,
            "room": room,
            "source": source,
            "mic": mic,
            "tol": tolerance,
            "pra": version,
            "algo": _ALGORITHM,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def _simulate(pra, absorption: float, max_order: int, sr: int, room: Vec3, source: Vec3, mic: Vec3) -> np.ndarray:  # noqa: ANN001
    shoebox = pra.ShoeBox(
        list(room),
        fs=sr,
        materials=pra.Material(absorption),
        max_order=max_order,
        air_absorption=False,
        ray_tracing=False,
        use_rand_ism=False,
    )
    shoebox.add_source(list(source))
    shoebox.add_microphone(list(mic))
    shoebox.compute_rir()
    return np.asarray(shoebox.rir[0][0], dtype=np.float64)


def _load_cached(path: Path, key: str) -> RoomIR | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            ir = np.array(data["ir"], dtype=np.float32)
            ir.setflags(write=False)
        return RoomIR(
            ir,
            int(meta["sr"]),
            float(meta["rt60_target"]),
            Rt60(float(meta["rt60"]), str(meta["method"]), tuple(meta["fit_db"])),
            float(meta["absorption"]),
            int(meta["max_order"]),
            int(meta["iterations"]),
            key,
        )
    except (OSError, KeyError, ValueError, TypeError):
        return None


def _store(path: Path, room_ir: RoomIR) -> None:
    meta = {
        "sr": room_ir.sr,
        "rt60_target": room_ir.rt60_target,
        "rt60": room_ir.rt60.seconds,
        "method": room_ir.rt60.method,
        "fit_db": list(room_ir.rt60.fit_db),
        "absorption": room_ir.absorption,
        "max_order": room_ir.max_order,
        "iterations": room_ir.iterations,
    }
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, ir=room_ir.ir, meta=np.array(json.dumps(meta)))
        os.replace(tmp, path)
    except OSError:  # a read-only cache only costs a re-simulation next time
        tmp.unlink(missing_ok=True)


def room_ir(
    rt60: float,
    sr: int = 16000,
    room: Vec3 = DEFAULT_ROOM,
    source: Vec3 = DEFAULT_SOURCE,
    mic: Vec3 = DEFAULT_MIC,
    tolerance: float = 0.05,
    max_iter: int = 24,
    cache: bool = True,
) -> RoomIR:
    """A shoebox response whose measured RT60 is within ``tolerance`` of ``rt60`` (cached)."""
    pra = require("pyroomacoustics", "audio")
    room, source, mic = (tuple(float(v) for v in p) for p in (room, source, mic))  # type: ignore[assignment]
    _check_geometry(room, source, mic)
    if not (isinstance(rt60, (int, float)) and 0 < rt60 <= 5):
        raise ConfigError(f"rt60 must be in (0, 5] seconds, got {rt60!r}")
    key = _cache_key(float(rt60), int(sr), room, source, mic, float(tolerance), str(pra.__version__))
    if key in _MEMO:
        return _MEMO[key]
    path = None
    if cache:
        path = cache_dir() / "rir" / f"{key}.npz"
        hit = _load_cached(path, key) if path.is_file() else None
        if hit is not None:
            _MEMO[key] = hit
            return hit
    try:
        a, max_order = pra.inverse_sabine(float(rt60), list(room))
    except ValueError:
        raise ConfigError(
            f"a room of {room} m cannot have RT60 {rt60} s; fix: use a smaller room for short "
            "RT60s or a larger one for long RT60s"
        ) from None
    lo, hi = 1e-4, 0.9999
    a = min(max(float(a), lo * 2), hi / 1.0001)
    for it in range(1, max_iter + 1):
        ir = _simulate(pra, a, int(max_order), int(sr), room, source, mic)
        measured = measure_rt60(ir, sr)
        if abs(measured.seconds - rt60) <= tolerance * rt60:
            ir32 = ir.astype(np.float32)
            ir32.setflags(write=False)
            found = RoomIR(ir32, int(sr), float(rt60), measured, a, int(max_order), it, key)
            _MEMO[key] = found
            if path is not None:
                _store(path, found)
            return found
        if measured.seconds > rt60:
            lo = a  # too reverberant: more absorption
        else:
            hi = a
        alpha = -math.log1p(-a) * measured.seconds / rt60  # Eyring: RT60 ~ 1 / -ln(1 - a)
        proposal = -math.expm1(-alpha)
        a = proposal if lo < proposal < hi and abs(proposal - a) > 1e-7 else (lo + hi) / 2
    raise TransformError(
        f"could not reach RT60 {rt60} s within {tolerance:.0%} in {max_iter} simulations "
        f"(room {room}); fix: change the room size or the tolerance"
    )


def direct_path_index(ir: np.ndarray, sr: int) -> int:
    """Index of the direct-path peak: the largest sample within 2 ms after the first sample
    reaching half the response's maximum."""
    a = np.abs(np.asarray(ir, dtype=np.float64))
    first = int(np.argmax(a >= 0.5 * a.max()))
    window = a[first : first + max(int(0.002 * sr), 1)]
    return first + int(np.argmax(window))


def apply_ir(samples: np.ndarray, ir: np.ndarray, sr: int, keep_level: bool = True) -> np.ndarray:
    """Convolve, align on the direct path, keep the input's length (and RMS if ``keep_level``)."""
    x = np.asarray(samples, dtype=np.float32)
    onset = direct_path_index(ir, sr)
    wet = fft_convolve(x, np.asarray(ir, dtype=np.float64))[onset : onset + x.size]
    y = wet.astype(np.float32)
    return scale_to_rms(y, rms(x)) if keep_level else y


@register_transform
@dataclass(frozen=True, slots=True)
class Reverb(Transform):
    """Reverberate with a simulated room of measured RT60 ``rt60`` s, or with a measured ``rir``.

    Give exactly one of ``rt60`` and ``rir``. ``info`` records the measured RT60 of the response.
    """

    name: ClassVar[str] = "reverb"
    rt60: float | None = None
    rir: AudioAsset | None = None
    room: Vec3 = DEFAULT_ROOM
    source: Vec3 = DEFAULT_SOURCE
    mic: Vec3 = DEFAULT_MIC
    tolerance: float = 0.05
    keep_level: bool = True

    def __post_init__(self) -> None:
        if (self.rt60 is None) == (self.rir is None):
            raise ConfigError(
                "reverb needs exactly one of rt60 (seconds, simulated room) or rir (a measured "
                "response, AudioAsset); fix: Reverb(rt60=0.6) or Reverb(rir=AudioAsset.from_file(p))"
            )
        if self.rir is not None and not isinstance(self.rir, AudioAsset):
            raise ConfigError("reverb rir must be an AudioAsset; fix: AudioAsset.from_file(path)")
        for name in ("room", "source", "mic"):
            object.__setattr__(self, name, tuple(float(v) for v in getattr(self, name)))
        if self.rt60 is not None:
            if not (isinstance(self.rt60, (int, float)) and 0 < self.rt60 <= 5):
                raise ConfigError(f"reverb rt60 must be in (0, 5] seconds, got {self.rt60!r}")
            if not (isinstance(self.tolerance, (int, float)) and 0 < self.tolerance < 0.5):
                raise ConfigError(f"reverb tolerance must be in (0, 0.5), got {self.tolerance!r}")
            _check_geometry(self.room, self.source, self.mic)

    @property
    def tag(self) -> str:
        if self.rir is not None:
            tag = f"reverb-rir-{asset_label(self.rir)}"
        else:
            tag = f"reverb-rt60-{fmt_num(self.rt60)}s"  # type: ignore[arg-type]
            if (self.room, self.source, self.mic) != (DEFAULT_ROOM, DEFAULT_SOURCE, DEFAULT_MIC):
                geo = hashlib.sha256(repr((self.room, self.source, self.mic)).encode()).hexdigest()[:6]
                tag += f"-room{geo}"
        return tag if self.keep_level else tag + "-raw"

    def response(self, sr: int) -> tuple[np.ndarray, dict]:
        """The impulse response at ``sr`` and what is known about it."""
        if self.rir is not None:
            ir = self.rir.at_rate(sr).astype(np.float64)
            if not np.any(ir):
                raise TransformError(f"impulse response {self.rir.name!r} is silent; fix: use a measured response")
            info: dict = {"rir": self.rir.name}
            try:
                measured = measure_rt60(ir, sr, noise_floor=True)
                info.update(rt60_s=measured.seconds, rt60_method=measured.method)
            except TransformError as exc:  # still usable for convolution; record why RT60 is unknown
                info.update(rt60_s=None, rt60_method=None, rt60_error=str(exc))
            return ir, info
        found = room_ir(self.rt60, sr, self.room, self.source, self.mic, self.tolerance)  # type: ignore[arg-type]
        return found.ir.astype(np.float64), {
            "rt60_target_s": found.rt60_target,
            "rt60_s": found.rt60.seconds,
            "rt60_method": found.rt60.method,
            "absorption": found.absorption,
            "max_order": found.max_order,
            "search_iterations": found.iterations,
        }

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        ir, info = self.response(sr)
        info["ir_samples"] = int(ir.size)
        info["direct_index"] = direct_path_index(ir, sr)
        return apply_ir(x, ir, sr, self.keep_level), info
