"""Typed error spans: workers mark the wrong words of a summary and type each span with AggreFact's unified
taxonomy; the platform measures agreement and detectors against the spans (one protocol app)."""
