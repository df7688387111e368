"""Directory corpora: the LibriSpeech layout and Kaldi data directories.

LibriSpeech: ``<root>/**/<speaker>-<chapter>.trans.txt`` files whose lines are
``<utterance id> <TRANSCRIPT>``; the audio of each utterance sits beside it as
``<utterance id>.flac`` (``.wav`` is accepted too). The speaker is the id's first field.

Kaldi: ``wav.scp`` (``<utt> <path>``), ``text`` (``<utt> <transcript>``) and optionally
``utt2spk``. Only plain paths are supported in ``wav.scp``; piped commands (``sox ... |``) and
``.ark:offset`` entries are rejected with a fix (extract the audio to files first).
"""

from __future__ import annotations

from pathlib import Path

from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.corpus.manifests import DEFAULT_SPLIT, corpus_token
from asr_audit.errors import InputFileError

LIBRISPEECH_AUDIO_SUFFIXES = (".flac", ".wav")


def _read_lines(path: Path) -> list[tuple[int, str]]:
    try:
        data = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(path, f"not valid UTF-8 (byte {exc.start})", "re-encode the file as UTF-8") from None
    return [(i, ln.strip()) for i, ln in enumerate(data.splitlines(), start=1) if ln.strip()]


def _key_value(text: str) -> tuple[str, str]:
    """Split ``'<key> <value...>'`` on the first run of whitespace."""
    parts = text.split(maxsplit=1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def is_librispeech_dir(root: Path) -> bool:
    return root.is_dir() and next(root.rglob("*.trans.txt"), None) is not None


def read_librispeech(root: str | Path, name: str | None = None, split: str = DEFAULT_SPLIT) -> Corpus:
    """Read a LibriSpeech-layout directory into a :class:`Corpus` (clips sorted by id)."""
    root = Path(root)
    trans_files = sorted(root.rglob("*.trans.txt"))
    if not trans_files:
        raise InputFileError(
            root,
            "no *.trans.txt files found",
            "point --corpus at a LibriSpeech split folder (e.g. LibriSpeech/test-clean)",
        )
    cname = corpus_token(name or root.name)
    clips: dict[str, Clip] = {}
    for tf in trans_files:
        for line, text in _read_lines(tf):
            utt, ref = _key_value(text)
            if not ref:
                raise InputFileError(
                    tf,
                    f"line has an utterance id {utt!r} but no transcript",
                    "write '<utterance-id> <TRANSCRIPT>' on each line",
                    line,
                )
            audio = next(
                (tf.parent / f"{utt}{s}" for s in LIBRISPEECH_AUDIO_SUFFIXES if (tf.parent / f"{utt}{s}").exists()),
                tf.parent / f"{utt}.flac",
            )
            if utt in clips:
                raise InputFileError(tf, f"utterance id {utt!r} appears twice", "keep one line per utterance", line)
            clips[utt] = Clip(
                id=utt, reference=ref, audio_path=str(audio), speaker=utt.split("-")[0], language="en", corpus=cname
            )
    return Corpus(name=cname, split=split, source=str(root), clips=tuple(clips[k] for k in sorted(clips)))


def is_kaldi_dir(root: Path) -> bool:
    return root.is_dir() and (root / "wav.scp").is_file()


def read_kaldi(root: str | Path, name: str | None = None, split: str = DEFAULT_SPLIT) -> Corpus:
    """Read a Kaldi data directory (``wav.scp`` + ``text`` [+ ``utt2spk``]) into a :class:`Corpus`."""
    root = Path(root)
    scp, text_file, u2s = root / "wav.scp", root / "text", root / "utt2spk"
    if not scp.is_file():
        raise InputFileError(scp, "no such file", "a Kaldi data directory needs wav.scp, text and optionally utt2spk")
    if not text_file.is_file():
        raise InputFileError(
            text_file, "no such file", "add the reference transcripts as '<utt> <transcript>' lines in 'text'"
        )
    if (root / "segments").is_file():
        raise InputFileError(
            root / "segments",
            "segment files are not supported",
            "cut the segments into separate audio files and list them in wav.scp",
        )
    cname = corpus_token(name or root.name)
    wavs: dict[str, tuple[str, int]] = {}
    for line, entry in _read_lines(scp):
        utt, target = _key_value(entry)
        if not target:
            raise InputFileError(scp, f"utterance {utt!r} has no audio path", "write '<utt> <path>' on each line", line)
        if target.endswith("|") or target.startswith("|"):
            raise InputFileError(
                scp,
                f"utterance {utt!r} uses a piped command ({target[:40]!r})",
                "run the command once to write the audio to a file, and list the file path",
                line,
            )
        if ".ark:" in target:
            raise InputFileError(
                scp,
                f"utterance {utt!r} points into an archive ({target[:40]!r})",
                "extract the audio to files (e.g. with wav-copy) and list the file paths",
                line,
            )
        if utt in wavs:
            raise InputFileError(
                scp,
                f"utterance {utt!r} appears twice (first on line {wavs[utt][1]})",
                "keep one line per utterance",
                line,
            )
        p = Path(target)
        wavs[utt] = (str(p if p.is_absolute() else root / p), line)
    refs: dict[str, str] = {}
    for line, entry in _read_lines(text_file):
        utt, ref = _key_value(entry)
        if utt not in wavs:
            raise InputFileError(
                text_file,
                f"utterance {utt!r} has no audio in wav.scp",
                "list its audio in wav.scp, or remove the line",
                line,
            )
        if utt in refs:
            raise InputFileError(text_file, f"utterance {utt!r} appears twice", "keep one line per utterance", line)
        refs[utt] = ref
    missing = [u for u in wavs if u not in refs]
    if missing:
        raise InputFileError(
            scp,
            f"{len(missing)} utterance(s) have no reference in 'text' (first: {missing[0]!r})",
            "add their transcripts to 'text' or drop them from wav.scp",
            wavs[missing[0]][1],
        )
    speakers: dict[str, str] = {}
    if u2s.is_file():
        for line, entry in _read_lines(u2s):
            utt, spk = _key_value(entry)
            if not spk:
                raise InputFileError(u2s, f"utterance {utt!r} has no speaker", "write '<utt> <speaker>'", line)
            speakers[utt] = spk
    clips = tuple(
        Clip(id=u, reference=refs[u], audio_path=wavs[u][0], speaker=speakers.get(u), corpus=cname)
        for u in sorted(wavs)
    )
    return Corpus(name=cname, split=split, source=str(root), clips=clips)
