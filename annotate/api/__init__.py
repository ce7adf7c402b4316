"""FactLab's REST API (Django REST framework), served under ``/api/``; see ``docs/api.md``."""
