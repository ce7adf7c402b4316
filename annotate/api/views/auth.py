"""API tokens: create and revoke."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api import serializers
from annotate.api.authentication import token_expired
from annotate.roles import role_of


class TokenView(APIView):
    """Create (POST) or revoke (DELETE) the caller's API token."""

    permission_classes = [AllowAny]

    @extend_schema(request=serializers.TokenRequestSerializer, responses={200: serializers.TokenSerializer, 201: serializers.TokenSerializer})
    def post(self, request):
        data = serializers.TokenRequestSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        user = data.validated_data["user"]
        token, created = Token.objects.get_or_create(user=user)
        if not created and token_expired(token):  # an expired token is replaced, never handed out again
            token.delete()
            token, created = Token.objects.create(user=user), True
        body = {"token": token.key, "username": user.get_username(), "role": role_of(user)}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request):
        if not request.user or not request.user.is_authenticated:
            self.permission_denied(request, message="log in or send your token to revoke it")
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
