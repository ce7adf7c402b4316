"""The API's exception handler: DRF's, plus a 503 with a clear message when the task broker is down, and 409
when the only thing wrong with a body is a value another object already holds (a taken slug)."""
from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from factlab.jobs import BrokerUnavailable


def exception_handler(exc, context):
    if isinstance(exc, BrokerUnavailable):
        response = Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        response["Retry-After"] = "60"
        return response
    response = drf_exception_handler(exc, context)
    if isinstance(exc, ValidationError) and response is not None and _only_unique(exc.get_codes()):
        # Well-formed, but in conflict with the current state: a schema cannot state what is taken.
        response.status_code = status.HTTP_409_CONFLICT
    return response


def _only_unique(codes) -> bool:
    if isinstance(codes, dict):
        return bool(codes) and all(_only_unique(c) for c in codes.values())
    if isinstance(codes, list):
        return bool(codes) and all(_only_unique(c) for c in codes)
    return codes == "unique"
