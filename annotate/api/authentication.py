"""API token authentication with expiry (``FACTLAB_TOKEN_TTL_HOURS``) and revocation on a password change."""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import pre_save
from django.dispatch import receiver
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token


def token_expired(token: Token, now=None) -> bool:
    ttl = float(settings.FACTLAB_TOKEN_TTL_HOURS)
    return ttl > 0 and token.created < (now or timezone.now()) - timedelta(hours=ttl)


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token, refused (and deleted) once older than the configured lifetime."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            token.delete()
            raise exceptions.AuthenticationFailed("Token expired; create a new one with POST /api/auth/token/.")
        return user, token


@receiver(pre_save, sender=get_user_model(), dispatch_uid="factlab-revoke-tokens-on-password-change")
def revoke_tokens_on_password_change(sender, instance, raw=False, **kwargs) -> None:
    """A new password (set by the user, an admin or `changepassword`) ends every API token of the account."""
    if raw or instance.pk is None:
        return
    previous = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if previous is not None and previous != instance.password:
        Token.objects.filter(user_id=instance.pk).delete()
