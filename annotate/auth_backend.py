"""Sign-in backend: Django's model backend, loading a user's worker record with the user.

Every worker page needs both; joined, the session's user costs one query per request instead of two.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class WorkerAwareBackend(ModelBackend):
    def get_user(self, user_id):
        try:
            user = get_user_model()._default_manager.select_related("worker").get(pk=user_id)
        except get_user_model().DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
