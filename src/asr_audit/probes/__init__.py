"""asr_audit.probes, by what a probe reads.

* :mod:`asr_audit.probes.predfiles` — prediction files (normalized text): refdis, inflation, switch rate;
* :mod:`asr_audit.probes.audio` — clips and backends: masked recovery, lift, continuation;
* :mod:`asr_audit.probes.battery.battery` — the battery of audio conditions and the courtesy study.
"""
