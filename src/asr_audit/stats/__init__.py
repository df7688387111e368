"""asr_audit.stats"""
