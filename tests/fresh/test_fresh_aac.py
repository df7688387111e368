"""HLS-style AAC in MPEG-TS (what the Parliament's floor segments probably are) decodes through
PyAV where libsndfile cannot, to 16 kHz mono aligned with the source; undecodable bytes still give
a one-line error naming the URL. The clip is spoken by flite and encoded here by FFmpeg's native
``aac`` encoder. No network."""

from __future__ import annotations

import io
import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf

from asr_audit.audio.io import to_mono_16k
from asr_audit.errors import AuditError
from asr_audit.fresh.build import decode, read_window
from asr_audit.fresh.europarl import Part

av = pytest.importorskip("av")

SR = 16_000


def _aac_ts(samples: np.ndarray, rate: int = 48_000) -> bytes:
    """``samples`` (16 kHz mono) as stereo AAC at ``rate`` in MPEG-TS, as an HLS segment is."""
    import soxr

    up = soxr.resample(samples, SR, rate).astype(np.float32)
    stereo = np.stack([up, 0.5 * up])  # two different channels: the decoder must downmix
    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mpegts") as out:
        stream = out.add_stream("aac", rate=rate, layout="stereo")
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(stereo), format="fltp", layout="stereo")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buf.getvalue()


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    if shutil.which("flite") is None:
        pytest.skip("flite not installed")
    out = tmp_path_factory.mktemp("aac") / "say.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", "The clocks were striking thirteen.", "-o", str(out)], check=True)
    samples, rate = sf.read(out, dtype="float32")
    return to_mono_16k(samples, rate)


def _lag(a: np.ndarray, b: np.ndarray) -> tuple[int, float]:
    """The lag of ``b`` behind ``a`` (samples) and the correlation there."""
    n = min(len(a), len(b))
    full = np.correlate(b[: n + 2000], a[:n], mode="full")[n - 1 :]
    k = int(np.argmax(full[:2000]))
    x, y = a[: n - k], b[k:n]
    return k, float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))


def test_aac_in_mpeg_ts_decodes_to_16k_mono_aligned_with_the_source(clip) -> None:
    data = _aac_ts(clip)
    with pytest.raises(Exception):  # noqa: B017 - libsndfile cannot read it: the fallback is what decodes
        sf.read(io.BytesIO(data))
    audio = decode(data, "http://127.0.0.1/seg0.ts")
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(len(audio) - len(clip)) < 0.1 * SR  # same duration, up to the encoder's priming and padding
    lag, corr = _lag(clip, audio)
    assert lag < 0.05 * SR and corr > 0.9  # the mean of the two channels is the source, 50 ms at most late
    rms = float(np.sqrt(np.mean(audio**2)) / np.sqrt(np.mean(clip**2)))
    assert 0.6 < rms < 0.9  # downmixed: (1 + 0.5) / 2 of the source's level


def test_hls_segments_of_one_aac_ts_stream_join_into_the_window(clip) -> None:
    data = _aac_ts(clip)
    cut = (len(data) // 2) // 188 * 188  # a segmenter cuts the one stream at TS packet boundaries
    bodies = {"seg0.ts": data[:cut], "seg1.ts": data[cut:]}

    class Served:
        def get(self, url: str, origin: str | None = None) -> bytes:
            return bodies[url]

    half = len(clip) / SR / 2
    parts = [Part(0.0, half, "seg0.ts"), Part(half, half, "seg1.ts")]
    window = read_window(Served(), parts, 0.0, 2 * half)  # type: ignore[arg-type]
    whole = decode(data, "whole")
    assert len(window) == len(clip) and np.allclose(window, whole[: len(window)])  # joined, decoded as one stream
    lag, corr = _lag(clip, window)
    assert lag < 0.05 * SR and corr > 0.9


def test_undecodable_bytes_give_a_one_line_error_naming_the_url() -> None:
    with pytest.raises(AuditError) as err:
        decode(b"this is not audio", "http://127.0.0.1/hls/seg9.ts")
    message = str(err.value)
    assert message.startswith("http://127.0.0.1/hls/seg9.ts: cannot decode the audio (") and "fix:" in message
    assert "\n" not in message and "BytesIO" not in message


def test_without_pyav_the_error_names_the_extra(monkeypatch) -> None:
    import asr_audit.fresh.build as build
    from asr_audit.errors import MissingExtraError

    def missing(module: str, extra: str) -> None:
        raise MissingExtraError(module, extra)

    monkeypatch.setattr(build, "require", missing)
    with pytest.raises(AuditError) as err:
        decode(b"\x47" * 188, "http://127.0.0.1/hls/seg0.ts")
    message = str(err.value)
    assert message.startswith("http://127.0.0.1/hls/seg0.ts: cannot decode the audio (")
    assert "pip install 'asr-audit[audio]'" in message and "\n" not in message
