"""Sign-in backend: Django's model backend, loading a user's worker record with the user.

Every worker page needs both; joined, the session's user costs one query per request instead of two, compiled
once per process (:class:`~annotate.rows.CompiledQuery`: every request of every page runs it).
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from annotate.demo_accounts import is_published_credential
from annotate.rows import CompiledQuery

_USER_WITH_WORKER = CompiledQuery(
    lambda user_id: get_user_model()._default_manager.select_related("worker").filter(pk=user_id)[:1], user_id=int,
)


class WorkerAwareBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        # A database seeded by the demo keeps its accounts; in production their published passwords open nothing.
        # PermissionDenied (not None) so that the plain model backend listed after this one is not asked either.
        if settings.PRODUCTION and is_published_credential(username, password):
            raise PermissionDenied("published demo credentials are refused in production")
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_user(self, user_id):
        try:
            user = _USER_WITH_WORKER.row(user_id=user_id)
        except (TypeError, ValueError):  # a session naming no integer id
            return None
        return user if user is not None and self.user_can_authenticate(user) else None
