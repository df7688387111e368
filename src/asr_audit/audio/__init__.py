"""asr_audit.audio"""
