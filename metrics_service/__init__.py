"""Scorers and statistics for summary factuality.

``metrics_service.scorers`` and ``metrics_service.stats`` are plain Python (no Django); the Django app
part (scoring jobs, Celery tasks, commands) lives in ``models``, ``tasks`` and ``management``.
"""
