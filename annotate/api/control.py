"""Quality-control endpoints (admins only): a campaign's gold labels, and releasing a worker's held pay."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Campaign, GoldLabel, GoldSource, Participation, Summary
from annotate.services.errors import InvalidSubmission
from annotate.services.gold import mark_gold_public, remove_gold_label, set_gold_label
from annotate.services.pay_rules import release_held_pay

from .parsers import JSONParser
from .permissions import IsAdmin

#: PATCH of a gold label: ``public`` is required, a JSON boolean (a PATCH body's fields are otherwise optional).
VISIBILITY_BODY = {"application/json": {
    "type": "object", "properties": {"public": {"type": "boolean"}}, "required": ["public"],
}}


class GoldLabelSerializer(serializers.ModelSerializer):
    class Meta:
        model = GoldLabel
        fields = ("id", "summary", "sentence_index", "factual", "category", "source", "public", "note", "updated_at")
        read_only_fields = fields


class GoldLabelInput(serializers.Serializer):
    summary = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="Id of a summary of this campaign.")
    sentence_index = serializers.IntegerField(min_value=0, max_value=100_000, help_text="0-based index of the sentence in the summary.")
    factual = serializers.BooleanField()
    category = serializers.CharField(required=False, allow_blank=True, max_length=10, help_text="FRANK code of the error (optional).")
    note = serializers.CharField(required=False, allow_blank=True, max_length=300)
    public = serializers.BooleanField(
        required=False, default=False, help_text="The label is published (e.g. copied from a released benchmark): it earns no bonus unless the campaign accepts public labels.",
    )


class GoldLabelList(APIView):
    """GET: the campaign's gold labels (filter ``?source=imported|admin|crowd``). POST: set one sentence's label."""

    permission_classes = (IsAdmin,)
    parser_classes = (JSONParser,)  # booleans are JSON's: a form's "0" is not a boolean

    @extend_schema(responses=GoldLabelSerializer(many=True))
    def get(self, request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        labels = GoldLabel.objects.filter(summary__document__campaign=campaign).order_by("summary_id", "sentence_index")
        source = request.query_params.get("source")
        if source:
            if source not in GoldSource.values:
                return Response({"detail": f"unknown source {source!r}; expected one of {', '.join(GoldSource.values)}"}, status=400)
            labels = labels.filter(source=source)
        return Response(GoldLabelSerializer(labels, many=True).data)

    @extend_schema(request=GoldLabelInput, responses={201: GoldLabelSerializer})
    def post(self, request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        data = GoldLabelInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        summary = Summary.objects.filter(pk=values["summary"], document__campaign=campaign).select_related("document__campaign").first()
        if summary is None:
            return Response({"summary": [f"campaign {slug} has no summary {values['summary']}"]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            label = set_gold_label(summary, values["sentence_index"], values["factual"], values.get("category", ""),
                                   user=request.user, note=values.get("note", ""), public=values["public"])
        except InvalidSubmission as exc:
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        return Response(GoldLabelSerializer(label).data, status=status.HTTP_201_CREATED)


class GoldLabelDetail(APIView):
    """PATCH ``{"public": bool}``: mark the label published or private. DELETE: take one gold label away; the
    sentence stops being a control sentence (204)."""

    permission_classes = (IsAdmin,)
    parser_classes = (JSONParser,)

    @extend_schema(request=VISIBILITY_BODY, responses=GoldLabelSerializer)
    def patch(self, request, slug: str, pk: int) -> Response:
        label = get_object_or_404(GoldLabel.objects.select_related("summary__document__campaign"), pk=pk, summary__document__campaign__slug=slug)
        public = request.data.get("public") if hasattr(request.data, "get") else None
        if not isinstance(public, bool):
            return Response({"public": ["expected true or false"]}, status=status.HTTP_400_BAD_REQUEST)
        mark_gold_public(label.summary.document.campaign, public, label_ids=[label.pk])
        label.refresh_from_db()
        return Response(GoldLabelSerializer(label).data)

    @extend_schema(responses={204: None})
    def delete(self, request, slug: str, pk: int) -> Response:
        label = get_object_or_404(GoldLabel.objects.select_related("summary__document__campaign"), pk=pk, summary__document__campaign__slug=slug)
        remove_gold_label(label)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReleaseHeldPay(APIView):
    """Release a worker's pay held for review (a consistently fast worker) into the ledger."""

    permission_classes = (IsAdmin,)

    @extend_schema(request=inline_serializer("ReleaseNote", {"note": serializers.CharField(required=False)}),
                   responses=inline_serializer("Released", {"released": serializers.DecimalField(max_digits=10, decimal_places=2)}))
    def post(self, request, slug: str, pk: int) -> Response:
        participation = get_object_or_404(Participation.objects.select_related("campaign"), pk=pk, campaign__slug=slug)
        note = request.data.get("note", "") if hasattr(request.data, "get") else ""
        released = release_held_pay(participation, user=request.user, note=str(note)[:200])
        return Response({"released": f"{released:.2f}"})
