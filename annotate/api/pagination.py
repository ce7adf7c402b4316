"""Pagination: page numbers for small lists, cursors for the large tables (judgements, scores, assignments)."""
from rest_framework.pagination import CursorPagination, PageNumberPagination


class StandardPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class IdCursorPagination(CursorPagination):
    """Stable, O(1) paging on the primary key, however far into the table."""

    ordering = "id"
    page_size = 200
    page_size_query_param = "page_size"
    max_page_size = 2000
