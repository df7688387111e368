"""Capture activations at hook sites, streamed to disk: one array file per site plus a manifest.

Encoder sites give one row per 20 ms frame of the clip's audio (the padding up to 30 s is
dropped: ``ceil(seconds / 0.02)`` frames); decoder sites give one row per token of the
teacher-forced text (``texts``, the backend's decode prompt first; only the text's token rows
are kept). ``pool="mean"`` writes one row per clip instead (the mean over those rows): what
:mod:`asr_audit.mechrun.direction` reads.

Layout of ``out_dir``::

    manifest.json      model identity, sites, dtype, pool, widths, and per clip: id, audio hash
                       (:func:`asr_audit.audio.io.audio_hash`, the store's key), row offset, rows
    <site>.bin         float32 (or float16) rows, little-endian, appended batch by batch

Memory stays bounded by one batch: rows are written as each batch finishes.
:func:`load_capture` maps the files back (``numpy.memmap``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.audio.io import audio_hash, load_audio
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.spec import load_corpus
from asr_audit.errors import ConfigError, InputFileError, require
from asr_audit.mech.interventions import recording
from asr_audit.mech.sites import parse_site
from asr_audit.models.base import SITES, load_backend, require_capability
from asr_audit.options import REQUIRED, CliFlag, split_names
from asr_audit.probes.core.flags import CORPUS, LIMIT, MODEL, SPEAKER

FORMAT = "asr-audit-capture"
MANIFEST = "manifest.json"
POOLS = ("none", "mean")
DTYPES = ("float32", "float16")
#: ``asr-audit mech capture``'s flags
FLAGS = (
    MODEL,
    CORPUS,
    CliFlag("sites", str, REQUIRED, "Hook sites, comma-separated (e.g. encoder.layers.2.out)."),
    CliFlag("out", Path, REQUIRED, "Folder for the per-site arrays and manifest.json.", ("--out", "-o")),
    CliFlag("pool", str, "none", "none (a row per frame / token) | mean (a row per clip)."),
    CliFlag("dtype", str, "float32", "float32 | float16 on disk."),
    SPEAKER,
    LIMIT,
    CliFlag("batch_size", int, 8, "Clips per forward pass.", minimum=1),
)
#: ``asr-audit mech capture --help``'s worked example: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit mech capture -m whisper-tiny.en-pt -c calib/calib-test.jsonl --sites "
        "encoder.layers.2.out,decoder.layers.2.out --pool mean -o caps/slt --speaker flite-slt",
        "one mean row per clip at two sites, one speaker's clips",
    ),
)
FRAME_SECONDS = 0.02
SAMPLE_RATE = 16_000


def site_file(site: str) -> str:
    return f"{site}.bin"


def n_frames(n_samples: int, max_frames: int) -> int:
    """Encoder frames covering ``n_samples`` of 16 kHz audio (at least 1, at most ``max_frames``)."""
    return max(1, min(max_frames, math.ceil(n_samples / SAMPLE_RATE / FRAME_SECONDS - 1e-9)))


@dataclass(frozen=True, slots=True)
class CaptureRow:
    clip_id: str
    audio_hash: str
    offset: int  # first row in every site file
    rows: int


@dataclass(frozen=True, slots=True)
class Capture:
    """A capture on disk (see the module docstring)."""

    root: Path
    model: dict[str, Any]
    sites: tuple[str, ...]
    widths: dict[str, int]
    dtype: str
    pool: str
    clips: tuple[CaptureRow, ...] = field(default=())

    def array(self, site: str) -> np.ndarray:
        """All rows of ``site`` (``total rows x width``, memory-mapped)."""
        if site not in self.sites:
            raise ConfigError(f"capture {self.root} has no site {site!r}; captured: {', '.join(self.sites)}")
        total = sum(c.rows for c in self.clips)
        path = self.root / site_file(site)
        expected = total * self.widths[site] * np.dtype(self.dtype).itemsize
        if not path.is_file() or path.stat().st_size != expected:
            raise InputFileError(path, f"should hold {total} rows of width {self.widths[site]}", "recapture")
        if total == 0:
            return np.zeros((0, self.widths[site]), self.dtype)
        return np.memmap(path, dtype=np.dtype(self.dtype).newbyteorder("<"), mode="r", shape=(total, self.widths[site]))

    def pooled(self, site: str) -> np.ndarray:
        """One row per clip (``clips x width``, float64): the mean over each clip's rows."""
        arr = self.array(site)
        return np.stack([np.asarray(arr[c.offset : c.offset + c.rows], np.float64).mean(0) for c in self.clips])

    def ids(self) -> list[str]:
        return [c.clip_id for c in self.clips]

    def summary(self) -> str:
        """One line: what was captured, and where."""
        rows = sum(c.rows for c in self.clips)
        return f"captured {len(self.clips)} clip(s), {rows} row(s) per site, {len(self.sites)} site(s) -> {self.root}"


class _SiteWriter:
    def __init__(self, root: Path, sites: Sequence[str], dtype: str) -> None:
        self.handles = {s: open(root / site_file(s), "wb") for s in sites}
        self.widths: dict[str, int] = {}
        self.dtype = np.dtype(dtype).newbyteorder("<")

    def write(self, site: str, rows: np.ndarray) -> None:
        w = self.widths.setdefault(site, int(rows.shape[-1]))
        if rows.shape[-1] != w:
            raise ConfigError(f"site {site} changed width from {w} to {rows.shape[-1]}")
        self.handles[site].write(np.ascontiguousarray(rows, dtype=self.dtype).tobytes())

    def close(self) -> None:
        for h in self.handles.values():
            h.close()


def capture(
    backend: Any,
    clips: Iterable[tuple[str, np.ndarray]],
    sites: Sequence[str],
    out_dir: str | Path,
    *,
    texts: Sequence[str] | None = None,
    pool: str = "none",
    dtype: str = "float32",
    batch_size: int = 8,
    encoded: Callable[[str], np.ndarray] | None = None,
) -> Capture:
    """Run ``backend`` over ``clips`` (``(clip id, 16 kHz samples)``) and stream ``sites`` to ``out_dir``.

    Decoder sites need ``texts`` (one per clip, teacher-forced). ``encoded(clip id)`` may supply
    precomputed encoder outputs (frames x width, e.g. the organism's encoder cache) so a
    decoder-only capture skips the encoder. Returns the :class:`Capture`.
    """
    require("torch", "torch")  # a missing extra is named before any work
    if pool not in POOLS:
        raise ConfigError(f"unknown pool {pool!r}; valid: {', '.join(POOLS)}")
    if dtype not in DTYPES:
        raise ConfigError(f"unknown capture dtype {dtype!r}; valid: {', '.join(DTYPES)}")
    sites = list(dict.fromkeys(sites))
    if not sites:
        raise ConfigError("capture needs at least one site; fix: e.g. --sites encoder.layers.2.out")
    for s in sites:
        backend.site_module(s)  # names an unknown site before any work
    dec_sites = [s for s in sites if parse_site(s)[0] == "decoder"]
    if encoded is not None and len(dec_sites) != len(sites):
        raise ConfigError(
            "precomputed encoder states serve decoder sites only; fix: capture encoder sites without them"
        )
    if dec_sites and texts is None:
        raise ConfigError(
            f"decoder sites ({', '.join(dec_sites)}) need a teacher-forced text per clip; fix: pass texts"
        )
    batch_size = max(1, min(batch_size, int(getattr(backend, "batch_size", batch_size))))  # one forward per batch
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    (root / MANIFEST).unlink(missing_ok=True)  # a folder holds a whole capture or none: the old one goes first
    writer = _SiteWriter(root, sites, dtype)
    rows: list[CaptureRow] = []
    offset = 0
    text_iter = iter(texts) if texts is not None else None
    try:
        batch: list[tuple[str, np.ndarray]] = []
        for item in clips:
            batch.append(item)
            if len(batch) == batch_size:
                offset = _capture_batch(backend, batch, sites, text_iter, pool, writer, rows, offset, encoded)
                batch = []
        if batch:
            offset = _capture_batch(backend, batch, sites, text_iter, pool, writer, rows, offset, encoded)
    except BaseException:
        writer.close()
        for s in sites:  # no array without its manifest (an unreadable clip, a failed batch, Ctrl-C)
            (root / site_file(s)).unlink(missing_ok=True)
        raise
    writer.close()
    widths = {s: writer.widths.get(s, 0) for s in sites}
    manifest = {
        "format": FORMAT,
        "model": backend.identity().to_dict(),
        "sites": sites,
        "widths": widths,
        "dtype": dtype,
        "pool": pool,
        "clips": [{"id": r.clip_id, "audio_hash": r.audio_hash, "offset": r.offset, "rows": r.rows} for r in rows],
    }
    tmp = root / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, root / MANIFEST)
    return load_capture(root)


def _capture_batch(
    backend: Any,
    batch: list[tuple[str, np.ndarray]],
    sites: list[str],
    text_iter: Any,
    pool: str,
    writer: _SiteWriter,
    rows: list[CaptureRow],
    offset: int,
    encoded: Callable[[str], np.ndarray] | None,
) -> int:
    torch = require("torch", "torch")
    audios = [np.asarray(a, dtype=np.float32) for _, a in batch]
    got: dict[str, Any] = {}

    def sink(site: str, t: Any) -> None:
        got[site] = t.to("cpu", torch.float32)

    texts = [next(text_iter) for _ in batch] if text_iter is not None else None
    with torch.inference_mode(), recording(backend, sites, sink), _given_states(backend, batch, encoded):
        if texts is not None:
            backend.score(audios, [""] * len(audios), texts)
        else:
            backend._encoder_states(audios)
    missing = [s for s in sites if s not in got]
    if missing:
        raise ConfigError(f"sites {', '.join(missing)} produced no activations in this forward pass")
    n_prompt = len(getattr(backend, "prompt", ()))
    spans: list[list[tuple[int, int]]] = []
    for b, a in enumerate(audios):
        per_site = []
        for s in sites:
            t = got[s]
            if parse_site(s)[0] == "encoder":
                per_site.append((0, n_frames(len(a), t.shape[1])))
            else:
                assert texts is not None
                n_tok = len(backend._encode_text(texts[b]))
                start = max(0, n_prompt - 1)  # the row that predicts the text's first token onward
                per_site.append((start, start + max(1, n_tok)))
        spans.append(per_site)
    n_rows = 1 if pool == "mean" else None
    counts = []
    for b in range(len(audios)):
        lens = {s: spans[b][j][1] - spans[b][j][0] for j, s in enumerate(sites)}
        if n_rows is None and len(set(lens.values())) > 1:
            raise ConfigError(
                "unpooled capture of encoder and decoder sites together gives different row counts per clip; "
                "fix: capture them separately, or use pool=mean"
            )
        counts.append(n_rows or next(iter(lens.values())))
    for j, s in enumerate(sites):
        t = got[s].numpy()
        parts = []
        for b in range(len(audios)):
            lo, hi = spans[b][j]
            seg = t[b, lo:hi]
            parts.append(seg.mean(0, keepdims=True) if pool == "mean" else seg)
        writer.write(s, np.concatenate(parts))
    for b, (cid, _) in enumerate(batch):
        rows.append(CaptureRow(cid, audio_hash(audios[b]), offset, counts[b]))
        offset += counts[b]
    return offset


@contextmanager
def _given_states(
    backend: Any, batch: list[tuple[str, np.ndarray]], encoded: Callable[[str], np.ndarray] | None
) -> Iterator[None]:
    """While active, ``backend`` reads the batch's encoder states from ``encoded`` instead of its encoder."""
    if encoded is None:
        yield
        return
    torch = require("torch", "torch")
    states = np.stack([np.asarray(encoded(cid), dtype=np.float32) for cid, _ in batch])
    tensor = torch.from_numpy(states).to(backend.device)
    backend._encoder_states = lambda clips: tensor  # instance attribute shadows the method
    try:
        yield
    finally:
        del backend._encoder_states


def capture_corpus(backend: Any, corpus: Corpus, sites: Sequence[str], out_dir: str | Path, **options: Any) -> Capture:
    """:func:`capture` of ``corpus``'s clips (their audio loaded as ``backend`` takes it), its decoder
    sites teacher-forced on the clips' references; ``options``: :func:`capture`'s ``pool``, ``dtype``,
    ``batch_size``."""
    texts = [c.reference for c in corpus.clips] if any(parse_site(s)[0] == "decoder" for s in sites) else None
    audio = ((c.id, load_audio(c, backend.max_duration)) for c in corpus.clips)
    return capture(backend, audio, sites, out_dir, texts=texts, **options)


def check_capture(sites: str, pool: str, dtype: str) -> list[str]:
    """``--sites`` (comma-separated hook-site names) as a list, after every option of a capture is
    checked (before any model loads): one-line errors naming the flag and the fix."""
    site_list = split_names(sites, "--sites") or []
    if not site_list:
        raise ConfigError("--sites is empty; fix: e.g. --sites encoder.layers.2.out")
    for s in site_list:
        parse_site(s)
    for flag, value, allowed, example in (("--pool", pool, POOLS, "mean"), ("--dtype", dtype, DTYPES, "float32")):
        if value not in allowed:
            raise ConfigError(f"{flag} {value!r} is not one of {', '.join(allowed)}; fix: e.g. {flag} {example}")
    return site_list


def speaker_clips(spec: str, speaker: str | None, limit: int | None) -> Corpus:
    """The clips of the corpus ``spec`` said by the ``--speaker`` voices (comma-separated; default:
    every clip), cut to the first ``limit``."""
    corpus = load_corpus(spec)
    if speaker:
        keep = set(split_names(speaker, "--speaker") or [])
        clips = tuple(c for c in corpus.clips if c.speaker in keep)
        if not clips:
            raise ConfigError(f"--speaker {speaker}: no clip of {spec} has that speaker; fix: check the manifest")
        corpus = Corpus(corpus.name, corpus.split, corpus.source, clips)
    return Corpus(corpus.name, corpus.split, corpus.source, corpus.clips[:limit]) if limit else corpus


def sites_backend(spec: str) -> Any:
    """The backend ``spec``, refused unless it exposes hook sites."""
    backend = load_backend(spec)
    require_capability(backend, SITES)
    return backend


def load_capture(root: str | Path) -> Capture:
    """The capture written by :func:`capture` in ``root``."""
    root = Path(root)
    path = root / MANIFEST
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        raise InputFileError(path, "no capture manifest", "run asr-audit mech capture first") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror or exc})", "pass a capture folder") from None
    except (ValueError, RecursionError):
        raise InputFileError(path, "not JSON", "recapture") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise InputFileError(path, "not a capture manifest", "recapture")
    try:
        clips = tuple(CaptureRow(c["id"], c["audio_hash"], int(c["offset"]), int(c["rows"])) for c in m["clips"])
        return Capture(root, m["model"], tuple(m["sites"]), dict(m["widths"]), m["dtype"], m["pool"], clips)
    except (KeyError, TypeError, ValueError):
        raise InputFileError(path, "a capture manifest with missing or malformed fields", "recapture") from None
