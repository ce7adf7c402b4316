"""Researchers and their one-time invitations."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api import serializers
from annotate.api.permissions import IsAdmin
from annotate.roles import RESEARCHER_GROUP, role_of
from annotate.services.researchers import InvitationInvalid, ResearcherError, accept_invitation, create_researcher, invitation_for


def _researcher_body(user, invitation=None) -> dict:
    body = {
        "username": user.get_username(), "email": user.email, "is_active": user.is_active,
        "campaigns": sorted(user.granted_campaigns.values_list("slug", flat=True)),
    }
    if invitation is not None:
        body["invitation"] = {
            "uid": invitation.uid, "token": invitation.token, "expires_in_seconds": invitation.expires_in_seconds,
            "url": invitation.path,
        }
    return body


class ResearcherListView(APIView):
    """Researchers (GET) and new researchers with a one-time invitation link (POST), admins only."""

    permission_classes = [IsAdmin]

    @extend_schema(responses=serializers.ResearcherSerializer(many=True))
    def get(self, request):
        from django.contrib.auth import get_user_model

        users = get_user_model().objects.filter(groups__name=RESEARCHER_GROUP).order_by("username").prefetch_related("granted_campaigns")
        return Response([_researcher_body(u) for u in users])

    @extend_schema(request=serializers.ResearcherCreateSerializer, responses={201: serializers.ResearcherSerializer})
    def post(self, request):
        body = serializers.ResearcherCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        from django.contrib.auth import get_user_model

        if get_user_model().objects.filter(username=data["username"]).exists():
            return Response({"username": [f"{data['username']!r} already exists"]}, status=status.HTTP_409_CONFLICT)
        try:
            user = create_researcher(data["username"], email=data["email"], campaigns=data["campaigns"])
        except ResearcherError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        invitation = invitation_for(user)
        answer = _researcher_body(user, invitation)
        answer["invitation"]["url"] = request.build_absolute_uri(invitation.path)
        return Response(answer, status=status.HTTP_201_CREATED)


class InvitationAcceptView(APIView):
    """The invitee sets a password with the invitation's ``uid`` and ``token`` and receives an API token."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(request=serializers.InvitationAcceptSerializer, responses={200: serializers.TokenSerializer})
    def post(self, request):
        body = serializers.InvitationAcceptSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            user = accept_invitation(data["uid"], data["token"], data["password"])
        except InvitationInvalid as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except ResearcherError as exc:
            return Response({"password": [str(exc).removeprefix("password: ")]}, status=status.HTTP_400_BAD_REQUEST)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key, "username": user.get_username(), "role": role_of(user)})
