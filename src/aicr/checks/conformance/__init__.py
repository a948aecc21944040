"""Conformance-phase checks: the CNCF AI Conformance requirements, one check each."""
