"""asr_audit.corpus"""
