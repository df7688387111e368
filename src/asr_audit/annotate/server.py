"""``asr-audit annotate``'s session and its local HTTP server (127.0.0.1 only, stdlib ``http.server``).

:func:`prepare` reads a refdis result (``refdis --json`` or a run's ``results.json``), draws the
sample (:func:`~asr_audit.probes.predfiles.verified_labels.draw_sample`), finds each clip's audio
(refusing without it), aligns each sampled clip's normalized reference with the project's aligner
through the result store (timings cached, kind ``timings``) and opens the labels file. A
:class:`Session` answers the page: its state is read from the labels file on every request, so a
reload or a restarted server resumes at the annotator's first unlabelled edit. :func:`serve`
binds ``127.0.0.1`` (port 0: a free one) and serves the page, the state, the labels and the audio
(the edit's window and the whole clip, 16 kHz mono WAV cut by the server); it refuses requests
whose ``Host`` is not the loopback address it listens on, and its page may load nothing from
elsewhere (``Content-Security-Policy``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from asr_audit.annotate.items import Item, build_items, check_audio, corrected_text, timings_through
from asr_audit.annotate.page import PAGE
from asr_audit.errors import AuditError, ConfigError, InputFileError
from asr_audit.models.openai_http import wav_bytes
from asr_audit.probes.predfiles.verified_labels import draw_sample, refdis_result_of, run_hash
from asr_audit.store.base import Store
from asr_audit.store.labels import CANT_TELL, NEITHER, LabelRow, LabelStore

SAMPLE_RATE = 16_000
CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; media-src 'self'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"
)
#: What the page may post: an option name or a choice that names no rendering.
PAGE_CHOICES = ("A", "B", NEITHER, CANT_TELL)


@dataclass
class Session:
    """One annotator labelling one sample of one refdis run."""

    items: list[Item]
    labels: LabelStore
    run_hash: str
    annotator: str
    lock: threading.RLock = field(default_factory=threading.RLock)

    def _mine(self) -> dict[str, LabelRow]:
        return {r.edit_key: r for r in self.labels.latest(run_hash=self.run_hash) if r.annotator == self.annotator}

    def state(self) -> dict[str, object]:
        """Progress and the first edit this annotator has not labelled (``None`` when done)."""
        with self.lock:
            mine = self._mine()
        done = sum(1 for it in self.items if it.key in mine)
        nxt = next((it for it in self.items if it.key not in mine), None)
        return {
            "annotator": self.annotator,
            "n": len(self.items),
            "done": done,
            "item": None if nxt is None else nxt.to_page(),
        }

    def label(self, index: int, option: str) -> dict[str, object]:
        """Store the annotator's answer to edit ``index`` (``A``/``B``/``neither``/``cant-tell``)."""
        if not 0 <= index < len(self.items):
            raise ConfigError(f"no edit {index} in this sample of {len(self.items)}")
        if option not in PAGE_CHOICES:
            raise ConfigError(f"choice {option!r} is not one of {', '.join(PAGE_CHOICES)}")
        it = self.items[index]
        choice = it.choice_of(option) if option in ("A", "B") else option
        with self.lock:
            self.labels.add(self.annotator, it.key, self.run_hash, choice, it.weight)
            return self.state()

    def undo(self) -> dict[str, object]:
        """Delete the annotator's latest label of this run."""
        with self.lock:
            self.labels.undo(self.annotator, self.run_hash)
            return self.state()

    def export(self) -> dict[str, object]:
        """Every annotator's latest labels of this run (the labels file holds them all)."""
        with self.lock:
            rows = self.labels.latest(run_hash=self.run_hash)
        return {"run_hash": self.run_hash, "n_sample": len(self.items), "labels": [r.to_dict() for r in rows]}

    def audio(self, index: int, whole: bool) -> bytes:
        """Edit ``index``'s window (or its whole clip) as 16 kHz mono 16-bit WAV."""
        from asr_audit.audio.io import load_audio
        from asr_audit.corpus.clips import Clip

        if not 0 <= index < len(self.items):
            raise ConfigError(f"no edit {index} in this sample of {len(self.items)}")
        it = self.items[index]
        samples = load_audio(Clip(it.clip_id, "", audio_path=str(it.audio)))
        if not whole:
            lo, hi = (int(round(t * SAMPLE_RATE)) for t in it.window)
            samples = samples[lo:hi]
        return wav_bytes(samples)


def read_result(path: Path, corpus: str | None) -> dict[str, Any]:
    """The refdis result of ``path`` (refdis ``--json`` output or a run's ``results.json``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputFileError(path, "no such file", "pass refdis --json output or a run's results.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputFileError(path, f"is not readable JSON ({exc})", "pass refdis --json output") from None
    if not isinstance(data, dict):
        raise InputFileError(path, "is not a JSON object", "pass refdis --json output or a run's results.json")
    return dict(refdis_result_of(data, corpus, str(path)))


def prepare(
    edits: Path,
    audio_root: Path | None,
    labels: LabelStore,
    *,
    sample: int | None,
    seed: int,
    annotator: str,
    corpus: str | None = None,
    aligner: Any = None,
    store: Store | None = None,
    progress: Callable[[str], None] | None = None,
) -> Session:
    """A labelling session (see the module docstring). ``aligner``: an
    :class:`~asr_audit.align.Aligner` (``None``: no timings, each edit plays its whole clip);
    ``store``: the result store caching its timings."""
    from asr_audit.align.run import align_clip
    from asr_audit.corpus.clips import Clip

    result = read_result(edits, corpus)
    if not annotator.strip():
        raise ConfigError("--annotator must name the person labelling (any non-empty id)")
    drawn = draw_sample(result, sample, seed)
    if not drawn:
        raise ConfigError(f"{edits} has no mined edits to label; fix: pass a refdis result with edits")
    clip_ids = sorted({str(s.edit["clip_id"]) for s in drawn})
    audio = check_audio(audio_root, clip_ids)
    refs = {str(k): str(v) for k, v in (result.get("references") or {}).items()}
    timings: dict[str, list[tuple[float, float]] | None] = {}
    durations: dict[str, float] = {}
    clip_edits: dict[str, list[Mapping[str, Any]]] = {}
    for e in result.get("edits", []):  # the full panel's edits: what it heard, clip by clip
        clip_edits.setdefault(str(e["clip_id"]), []).append(e)
    if aligner is not None and store is not None:
        store.register_backend(aligner.identity())
    for n, cid in enumerate(clip_ids, 1):
        clip = Clip(cid, refs.get(cid, "") or "-", audio_path=str(audio[cid]))
        if aligner is None or not refs.get(cid):
            durations[cid] = _duration(clip)
            timings[cid] = None
            continue
        aligned = align_clip(aligner, clip, store)
        if aligned.duration is None:  # the audio itself could not be read
            raise InputFileError(audio[cid], f"cannot be read ({aligned.error})", "pass readable audio files")
        durations[cid] = float(aligned.duration)
        timings[cid] = None if aligned.error else [(w.start, w.end) for w in aligned.words]
        status = "cached" if aligned.cached else "aligned"
        if aligned.error:  # words nobody said in the reference: align what the panel heard instead
            timings[cid] = _corrected_timings(aligner, clip, refs[cid], clip_edits.get(cid, []), store)
            status = "reference unaligned: " + ("the panel's text aligned" if timings[cid] else "whole clip")
        if progress is not None:
            progress(f"[{n}/{len(clip_ids)}] {cid}: {status}")
    items = build_items(drawn, refs, audio, durations, timings.get, seed)
    return Session(items=items, labels=labels, run_hash=run_hash(result), annotator=annotator.strip())


def _corrected_timings(
    aligner: Any, clip: Any, reference: str, edits: list[Mapping[str, Any]], store: Store | None
) -> list[tuple[float, float]] | None:
    """Per-reference-token timings from aligning the reference with the clip's edits applied
    (:func:`~asr_audit.annotate.items.corrected_text`); ``None`` when that fails too."""
    from dataclasses import replace

    from asr_audit.align.run import align_clip

    tokens, where = corrected_text(reference.split(), edits)
    if not edits or not tokens:
        return None
    aligned = align_clip(aligner, replace(clip, reference=" ".join(tokens)), store)
    if aligned.error or len(aligned.words) != len(tokens):
        return None
    return timings_through(where, [(w.start, w.end) for w in aligned.words])


def _duration(clip: Any) -> float:
    from asr_audit.audio.io import load_clip_audio

    return float(load_clip_audio(clip).duration)


def make_server(session: Session, port: int = 0) -> ThreadingHTTPServer:
    """The page's server on ``127.0.0.1:port`` (0: a free port), not yet serving."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "asr-audit-annotate"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: object) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def _local(self) -> bool:
            host = self.headers.get("Host", "")
            port = getattr(self.server, "server_port", None)
            if host in (f"127.0.0.1:{port}", f"localhost:{port}"):
                return True
            self._json(403, {"error": "this server answers only http://127.0.0.1 on its own port"})
            return False

        def _route(self, method: str) -> None:
            if not self._local():
                return
            path = self.path.split("?", 1)[0]
            try:
                if method == "GET" and path == "/":
                    self._send(200, PAGE.encode(), "text/html; charset=utf-8")
                elif method == "GET" and path == "/api/state":
                    self._json(200, session.state())
                elif method == "GET" and path == "/api/export":
                    self._json(200, session.export())
                elif method == "GET" and path.startswith("/audio/") and path.endswith(".wav"):
                    parts = path[: -len(".wav")].split("/")  # "", "audio", "edit"|"clip", index
                    if len(parts) != 4 or parts[2] not in ("edit", "clip") or not parts[3].isdigit():
                        self._json(404, {"error": f"no such audio: {path}"})
                        return
                    self._send(200, session.audio(int(parts[3]), parts[2] == "clip"), "audio/wav")
                elif method == "POST" and path in ("/api/label", "/api/undo"):
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                    if path == "/api/undo":
                        self._json(200, session.undo())
                    else:
                        self._json(200, session.label(int(body.get("index", -1)), str(body.get("choice", ""))))
                else:
                    self._json(404, {"error": f"no such page: {path}"})
            except (AuditError, ValueError, TypeError) as exc:
                self._json(400, {"error": str(exc)})

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server
