"""asr_audit.store"""
