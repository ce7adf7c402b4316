"""Query options that tell the truth: unknown ones are refused, dataset names are taken as the platform writes them.

* :class:`StrictQueryOptionsMiddleware` answers 400 naming any query option an API endpoint does not take
  (``?partal=false`` used to answer 200 with the defaults), one given twice or empty (each is a single
  value in the schema; an empty one would silently mean the default), and a yes/no option that is not
  ``true``/``false``/``1``/``0`` (``?factual=null`` used to filter nothing). The options an endpoint takes are
  read from the view class: its filter set, its pagination, its ``query_options`` serializer and
  ``extra_query_options`` (``boolean_query_options`` among them are yes/no).
* :class:`DatasetChoiceField` (serializers) and :class:`DatasetFilter` (filter sets) accept the dataset
  names FactLab's own exports write (FRANK's ``bbc`` for XSum) as well as the stored ones.
"""
from __future__ import annotations

import django_filters as df
from django.http import HttpRequest, JsonResponse
from rest_framework import serializers

from annotate.models import Dataset

# Names of datasets in FRANK's files, FactLab's FRANK export and the QAGS files -> the stored value.
DATASET_ALIASES: dict[str, str] = {"bbc": Dataset.XSUM, "cnn_dm": Dataset.CNNDM, "cnn": Dataset.CNNDM}
DATASET_NAMES: list[str] = [*Dataset.values, *DATASET_ALIASES]
# Options every API endpoint takes: DRF's response format override.
ALWAYS = frozenset({"format"})


def canonical_dataset(value: str) -> str:
    """The stored dataset value of ``value`` (``bbc`` -> ``xsum``); other values unchanged."""
    lowered = str(value).strip().lower()
    return DATASET_ALIASES.get(lowered, lowered)


class DatasetChoiceField(serializers.ChoiceField):
    """A dataset option: ``cnndm``, ``xsum`` (also ``bbc``, as FRANK and FactLab's FRANK export name it) or ``other``."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "cnndm, xsum (also bbc: FRANK's name for XSum) or other.")
        super().__init__(choices=DATASET_NAMES, **kwargs)

    def to_internal_value(self, data):
        if data == "" and self.allow_blank:
            return ""
        return canonical_dataset(super().to_internal_value(canonical_dataset(data) if isinstance(data, str) else data))


class DatasetFilter(df.ChoiceFilter):
    """Filter on a dataset under any of its names (``bbc`` and ``xsum`` are one)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("choices", [(name, name) for name in DATASET_NAMES])
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        return super().filter(qs, canonical_dataset(value) if value else value)


def allowed_query_options(view_class, actions: dict | None = None) -> frozenset[str] | None:
    """The query options ``view_class`` takes, or None when it does not say (left unchecked)."""
    names: set[str] = set(ALWAYS)
    filterset = getattr(view_class, "filterset_class", None)
    if filterset is not None:
        names.update(filterset.base_filters)
    pagination = getattr(view_class, "pagination_class", None)
    if pagination is not None:
        names.update(
            value for attr in ("page_query_param", "page_size_query_param", "cursor_query_param", "limit_query_param", "offset_query_param")
            if isinstance(value := getattr(pagination, attr, None), str)
        )
    query_serializer = getattr(view_class, "query_options", None)
    if query_serializer is not None:
        names.update(query_serializer().fields)
    names.update(getattr(view_class, "extra_query_options", ()))
    return frozenset(names)


BOOLEAN_SPELLINGS = frozenset({"true", "false", "1", "0"})


def boolean_query_options(view_class) -> frozenset[str]:
    """The yes/no options of ``view_class``: boolean filters, boolean query-option fields, and its own."""
    names: set[str] = set(getattr(view_class, "boolean_query_options", ()))
    filterset = getattr(view_class, "filterset_class", None)
    if filterset is not None:
        names.update(name for name, f in filterset.base_filters.items() if isinstance(f, df.BooleanFilter))
    query_serializer = getattr(view_class, "query_options", None)
    if query_serializer is not None:
        names.update(name for name, f in query_serializer().fields.items() if isinstance(f, serializers.BooleanField))
    return frozenset(names)


def query_option_problems(view_class, query) -> str | None:
    """Why the options given to ``view_class`` are refused (None: they are not), naming each option."""
    allowed = allowed_query_options(view_class)
    unknown = sorted(set(query) - allowed)
    if unknown:
        names = ", ".join(repr(name) for name in unknown)
        return f"unknown query option{'s' if len(unknown) > 1 else ''} {names}; this endpoint takes: {', '.join(sorted(allowed))}"
    repeated = sorted(name for name in query if len(query.getlist(name)) > 1)
    if repeated:
        return f"query option {', '.join(repr(n) for n in repeated)} given more than once; give each once"
    empty = sorted(name for name in query if not query[name].strip())
    if empty:
        return f"query option {', '.join(repr(n) for n in empty)} is empty; leave it out for the default"
    for name in sorted(boolean_query_options(view_class) & set(query)):
        if query[name].strip().lower() not in BOOLEAN_SPELLINGS:
            return f"query option {name!r} is yes/no: true, false, 1 or 0 (got {query[name][:40]!r})"
    return None


class StrictQueryOptionsMiddleware:
    """400 for a query option the API endpoint does not take, naming it and the ones it takes."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        view_class = getattr(view_func, "cls", None)
        # The REST API's views live in an app's ``api`` package (annotate.api, metrics_service.api, ...); the
        # schema and docs views and the HTML pages take options of their own.
        if not request.GET or view_class is None or view_class.__module__.split(".")[1:2] != ["api"]:
            return None
        problem = query_option_problems(view_class, request.GET)
        if problem is None:
            return None
        unknown = sorted(set(request.GET) - allowed_query_options(view_class))
        return JsonResponse({"detail": problem, **({"unknown_options": unknown} if unknown else {})}, status=400)
