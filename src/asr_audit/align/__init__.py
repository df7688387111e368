"""asr_audit.align"""
