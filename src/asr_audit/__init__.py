"""asr-audit: does a speech-recognition model listen, or recite the benchmark's answer key?

The Python API (:mod:`asr_audit.api`) is re-exported here, loaded on first use so that
``import asr_audit.errors`` (and the CLI) do not import every probe:

>>> import asr_audit
>>> asr_audit.refdis is asr_audit.api.refdis
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # the types of the lazy names below, for type checkers
    from asr_audit.api import (
        BatteryResult,
        OrthoResult,
        PredictionSet,
        ReadOptions,
        RefdisResult,
        RunOutcome,
        battery,
        calib_score,
        continuation,
        lift,
        load_predictions,
        masked,
        mech_steer,
        refdis,
        run_spec,
        switch_rate,
        to_dataframe,
        to_rows,
    )

__all__ = [
    "BatteryResult",
    "OrthoResult",
    "PredictionSet",
    "ReadOptions",
    "RefdisResult",
    "RunOutcome",
    "__version__",
    "battery",
    "calib_score",
    "continuation",
    "lift",
    "load_predictions",
    "masked",
    "mech_steer",
    "refdis",
    "run_spec",
    "switch_rate",
    "to_dataframe",
    "to_rows",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        # loaded on first use: the API imports the probes and the runner, which every
        # ``import asr_audit.<module>`` would otherwise load too
        from asr_audit import api

        return getattr(api, name)
    raise AttributeError(f"module 'asr_audit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
