"""The API's exception handler: DRF's, plus a 503 with a clear message when the task broker is down."""
from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from factlab.jobs import BrokerUnavailable


def exception_handler(exc, context):
    if isinstance(exc, BrokerUnavailable):
        response = Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        response["Retry-After"] = "60"
        return response
    return drf_exception_handler(exc, context)
