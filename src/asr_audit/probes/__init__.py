"""asr_audit.probes"""
