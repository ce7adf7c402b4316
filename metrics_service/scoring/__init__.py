"""Scoring jobs: the scorer registry (``registry``), submitting and steering jobs (``jobs``), scoring one
chunk (``chunks``) and healing lost or stale chunks (``healing``)."""
