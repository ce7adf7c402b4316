"""API tokens, researchers and invitations."""
from __future__ import annotations

from django.contrib.auth import authenticate
from rest_framework import serializers


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(required=False, max_length=150)
    password = serializers.CharField(required=False, max_length=128, style={"input_type": "password"}, trim_whitespace=False)

    def validate(self, attrs):
        user = self.context["request"].user
        if attrs.get("username") or attrs.get("password"):
            found = authenticate(self.context["request"], username=attrs.get("username", ""), password=attrs.get("password", ""))
            if found is None:
                raise serializers.ValidationError("unknown username or wrong password", code="authorization")
            attrs["user"] = found
        elif user and user.is_authenticated:
            attrs["user"] = user
        else:
            raise serializers.ValidationError("give username and password, or call this with a logged-in session", code="authorization")
        return attrs


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()
    role = serializers.CharField()


class ResearcherCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    campaigns = serializers.ListField(
        child=serializers.SlugField(max_length=80), required=False, default=list, help_text="Slugs of campaigns to grant."
    )


class InvitationSerializer(serializers.Serializer):
    uid = serializers.CharField()
    token = serializers.CharField()
    url = serializers.CharField(help_text="The one-time page where the invitee sets a password.")
    expires_in_seconds = serializers.IntegerField()


class ResearcherSerializer(serializers.Serializer):
    username = serializers.CharField()
    email = serializers.CharField(allow_blank=True)
    is_active = serializers.BooleanField(help_text="False until the invitation is accepted.")
    campaigns = serializers.ListField(child=serializers.CharField())
    invitation = InvitationSerializer(required=False, help_text="Only in the answer that creates the researcher.")


class InvitationAcceptSerializer(serializers.Serializer):
    uid = serializers.CharField(max_length=64)
    token = serializers.CharField(max_length=128)
    password = serializers.CharField(max_length=128, style={"input_type": "password"}, trim_whitespace=False)
