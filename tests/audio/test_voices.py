"""TTS voices: registry, config files, command/http plug-ins, caching, and every installed engine."""

from __future__ import annotations

import http.server
import io
import json
import shlex
import sys
import threading
import wave

import numpy as np
import pytest

from asr_audit.audio import voices as voices_mod
from asr_audit.audio.tts import ENGINES, SynthesisError
from asr_audit.audio.voices import (
    MissingEngineError,
    Voice,
    available_voices,
    get_voice,
    register_voice,
    register_voices,
    synthesize,
    voice_listing,
)
from asr_audit.errors import ConfigError

BUILTIN = [
    "flite-slt",
    "flite-rms",
    "flite-awb",
    "flite-kal",
    "flite-kal16",
    "espeak-en-us",
    "espeak-en-us-f3",
    "espeak-en-gb",
    "festival-kal",
    "festival-slt-hts",
    "piper-joe",
]
SLOW = {"piper-joe", "festival-kal", "festival-slt-hts"}
SENTENCE = "The sitting resumed at ten past four."


@pytest.fixture(autouse=True)
def _restore_registry():
    with voices_mod.VOICES.temporary():
        yield


def _wav_bytes(seconds: float = 0.5, sr: int = 22050) -> bytes:
    t = np.arange(int(seconds * sr)) / sr
    pcm = (0.3 * np.sin(2 * np.pi * 300 * t) * 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


@pytest.fixture()
def fake_tts(tmp_path):
    """A command-line 'synthesizer': writes a 300 Hz tone whose length grows with the text and
    logs every call, so tests can see when the cache answered instead."""
    log = tmp_path / "calls.log"
    script = tmp_path / "fake_tts.py"
    script.write_text(
        "import sys, wave, math\n"
        "text, out = sys.argv[1], sys.argv[2]\n"
        f"open({str(log)!r}, 'a').write(text + '\\n')\n"
        "sr = 22050; n = int(sr * (0.2 + 0.02 * len(text)))\n"
        "frames = b''.join(int(9000 * math.sin(2 * math.pi * 300 * i / sr)).to_bytes(2, 'little', signed=True)"
        " for i in range(n))\n"
        "w = wave.open(out, 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(sr)\n"
        "w.writeframes(frames); w.close()\n"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{text}} {{out}}"
    return command, log


def test_builtin_listing_and_hints():
    listing = {row.name: row for row in voice_listing()}
    assert set(BUILTIN) <= set(listing)
    assert "apt-get install flite" in listing["flite-slt"].install_hint
    assert "festvox-us-slt-hts" in listing["festival-slt-hts"].install_hint
    assert "asr-audit[tts]" in listing["piper-joe"].install_hint
    assert available_voices() == sorted(name for name, row in listing.items() if row.installed)
    assert all(get_voice(v).condition == "generic" for v in BUILTIN)
    with pytest.raises(ConfigError, match=r"unknown voice 'flite-zzz'; available voices: .*\(all: .*flite-slt"):
        get_voice("flite-zzz")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in BUILTIN])
def test_installed_voice_speaks(name):
    if name not in available_voices():
        pytest.skip(f"{name}: engine not installed ({get_voice(name).install_hint})")
    samples, sr = synthesize(name, SENTENCE)
    assert sr == 16_000 and samples.dtype == np.float32 and samples.ndim == 1
    assert 1.0 < samples.size / sr < 8.0
    assert np.sqrt(np.mean(samples.astype(np.float64) ** 2)) > 0.01
    assert np.abs(samples).max() <= 1.0


def test_command_voice_and_cache(fake_tts):
    command, log = fake_tts
    register_voice(
        Voice(
            "clone-spk1",
            "command",
            {"command": command, "version": "fake-1"},
            condition="test-set-clone",
            speaker="spk1",
        )
    )
    text = "It's 'quoted' text; $(rm -rf /) & more"
    a, sr = synthesize("clone-spk1", text)
    assert sr == 16_000 and a.size == int(16_000 * (0.2 + 0.02 * len(text)))
    assert log.read_text().splitlines() == [text]  # the text arrived verbatim, not through a shell
    b, _ = synthesize("clone-spk1", text)
    np.testing.assert_array_equal(a, b)
    assert len(log.read_text().splitlines()) == 1  # answered from the cache
    synthesize("clone-spk1", text, cache=False)
    assert len(log.read_text().splitlines()) == 2
    # a new engine version is a new cache key
    register_voice(
        Voice("clone-spk1", "command", {"command": command, "version": "fake-2"}, condition="test-set-clone"),
        replace=True,
    )
    synthesize("clone-spk1", text)
    assert len(log.read_text().splitlines()) == 3
    assert "clone-spk1" in available_voices(condition="test-set-clone")


def test_voices_from_toml(tmp_path, fake_tts):
    command, _ = fake_tts
    config = tmp_path / "voices.toml"
    config.write_text(
        "[voices.fresh-01]\n"
        f"engine = 'command'\ncommand = {json.dumps(command)}\ncondition = 'fresh-clone'\nspeaker = 'anna'\n\n"
        "[voices.generic-server]\n"
        "engine = 'http'\nurl = 'http://127.0.0.1:9/tts'\nparams = { speaker = 'x' }\n"
    )
    assert register_voices(config) == ["fresh-01", "generic-server"]
    assert get_voice("fresh-01").speaker == "anna" and get_voice("fresh-01").condition == "fresh-clone"
    assert get_voice("generic-server").options["params"] == {"speaker": "x"}
    assert register_voices(config) == ["fresh-01", "generic-server"]  # the same definitions again: fine
    config.write_text(config.read_text().replace("speaker = 'anna'", "speaker = 'bob'"))
    with pytest.raises(ConfigError, match="already registered"):
        register_voices(config)
    assert register_voices(config, replace=True) == ["fresh-01", "generic-server"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"engine": "sam"},
            "unknown engine 'sam'; available engines: command, espeak-ng, festival, flite, http, piper",
        ),
        ({"engine": "command", "command": "tts {text}"}, "needs {out} and {text}"),
        ({"engine": "command", "command": "tts {text} {out} {speaker}"}, "unknown placeholder"),
        ({"engine": "http", "url": "ftp://x"}, "must start with http"),
        ({"engine": "flite", "voice": "slt", "colour": "red"}, "unknown flite option"),
        ({"engine": "flite", "voice": "slt", "condition": "famous"}, "unknown condition 'famous'"),
        ({"engine": "piper"}, "exactly one of 'package'"),
        ({"voice": "slt"}, "needs an 'engine'"),
    ],
)
def test_bad_voice_config(entry, message):
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("(", r"\(")):
        register_voices({"voices": {"v1": entry}})


def test_bad_names_and_text():
    with pytest.raises(ConfigError, match="lowercase"):
        Voice("Bad Name", "flite", {"voice": "slt"})
    with pytest.raises(ConfigError, match="empty"):
        synthesize("flite-slt", "   ")


def test_missing_engine_names_the_package(monkeypatch):
    register_voice(Voice("ghost", "command", {"command": "no-such-tts-program-xyz {text} {out}"}))
    with pytest.raises(MissingEngineError, match="needs the command TTS engine.*fix: install the program"):
        synthesize("ghost", "hello")
    monkeypatch.setattr("asr_audit.audio.tts.shutil.which", lambda _: None)
    with pytest.raises(MissingEngineError, match=r"fix: apt-get install flite"):
        synthesize("flite-slt", "hello")
    assert "flite-slt" not in available_voices()


def test_failing_command_is_a_synthesis_error(tmp_path):
    register_voice(
        Voice(
            "broken",
            "command",
            {"command": f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)' {{text}} {{out}}"},
        )
    )
    with pytest.raises(SynthesisError, match="exit code 3"):
        synthesize("broken", "hello")


class _Handler(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).received.append(body)
        data = _wav_bytes() if body["text"] != "fail" else b"not audio"
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def test_http_voice_on_a_local_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/tts"
        register_voice(Voice("srv", "http", {"url": url, "params": {"speaker": "s9"}}, condition="fresh-clone"))
        samples, sr = synthesize("srv", "Good morning.")
        assert sr == 16_000 and samples.size == 8000 and np.abs(samples).max() > 0.2
        assert _Handler.received[-1] == {"text": "Good morning.", "speaker": "s9"}
        with pytest.raises(SynthesisError, match="cannot decode"):
            synthesize("srv", "fail")
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(SynthesisError, match="unreachable"):
        synthesize("srv", "Good evening.")


def test_engines_table():
    assert sorted(ENGINES) == ["command", "espeak-ng", "festival", "flite", "http", "piper"]
