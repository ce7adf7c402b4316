"""Pagination: page numbers for small lists, cursors for the large tables (judgements, scores, assignments).

``page_size`` is validated: a value that is not a whole number from 1 to the maximum gets a 400 naming the
range (DRF would silently use the default, accepting requests the schema says are invalid).
"""
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination


class StrictPageSize:
    page_size_query_param = "page_size"
    max_page_size: int

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= self.max_page_size:
            raise ValidationError({self.page_size_query_param: f"expected a whole number from 1 to {self.max_page_size}, got {raw[:40]!r}"})
        return int(raw)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
        return parameters


class StandardPagination(StrictPageSize, PageNumberPagination):
    page_size = 50
    max_page_size = 500


class IdCursorPagination(StrictPageSize, CursorPagination):
    """Stable, O(1) paging on the primary key, however far into the table."""

    ordering = "id"
    page_size = 200
    max_page_size = 2000
