"""asr_audit.text"""
