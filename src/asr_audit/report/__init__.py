"""asr_audit.report"""
