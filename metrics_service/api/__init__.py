"""The metrics service's REST API: scoring jobs, the report and its paper tables and figures, under ``/api/``."""
