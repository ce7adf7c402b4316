"""OpenAPI schema: every operation documents the error answers the API can give, and every value constraint
the API enforces (amounts' patterns, registry enums) is stated.

DRF answers 400 (validation), 401/403 (authentication, role), 404 (not found or not readable), 429
(rate limits) and the broker-backed operations 503, and the web server 414 (a request line too long); declaring them keeps clients and schema-based fuzzing
(tests/integration/test_schema_fuzz.py) in step with the server.
"""
from __future__ import annotations

from drf_spectacular.extensions import OpenApiSerializerFieldExtension

ERROR = {"type": "object", "additionalProperties": True, "description": "`detail` says what is wrong; validation errors name each field."}
ERRORS = {
    "400": "Invalid parameters or body.",
    "401": "Not authenticated (missing, wrong or expired token).",
    "403": "Authenticated, but the role may not do this.",
    "404": "No such object, or not one the caller may read.",
    "405": "Method not allowed.",
    "406": "Not acceptable (unknown format).",
    "409": "Conflict: the object's state does not allow this (e.g. a finished campaign or job), or a value is taken (slug, username).",
    "413": "Upload above FACTLAB_MAX_UPLOAD_BYTES.",
    "415": "Unsupported media type.",
    "429": "Rate limit exceeded (see Retry-After).",
    "503": "The task queue (Redis) is unreachable; nothing was stored.",
}
#: Answered by the web server in front of Django (gunicorn's ``limit_request_line``, 4094 bytes), as plain text.
SERVER_ERRORS = {
    "414": "The request line (path and query string) is longer than the web server accepts; nothing was read.",
}


def add_error_responses(result, generator, request, public):
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            for code, description in ERRORS.items():
                responses.setdefault(code, {
                    "description": description,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                })
            for code, description in SERVER_ERRORS.items():
                responses.setdefault(code, {"description": description})
    return result


# --------------------------------------------------------------------------- constraints read at generation

class ExactDecimalField(OpenApiSerializerFieldExtension):
    """An amount's pattern as the API checks it. drf-spectacular's lets the integer part be empty (so "" and "-"
    pass) and always allows a minus sign; the DecimalField refuses both, and a field with a minimum of 0 (pay,
    bonuses) refuses negative amounts."""

    target_class = "rest_framework.fields.DecimalField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        schema = auto_schema._map_serializer_field(field, direction, bypass_extensions=True)
        whole, places = field.max_whole_digits, field.decimal_places
        if "pattern" in schema and whole and places:
            sign = "" if field.min_value is not None and field.min_value >= 0 else "-?"
            schema["pattern"] = rf"^{sign}(?:\d{{1,{whole}}}(?:\.\d{{0,{places}}})?|\.\d{{1,{places}}})$"
        return schema


def _campaign_kinds() -> list[str]:
    from annotate.kinds import kind_choices

    return [value for value, _ in kind_choices()]


#: Values the API takes from a registry that can grow (protocols, scorers): read when the schema is generated,
#: the same lists the views check against. (component, property) and (path, method, query parameter).
#: The metrics service adds its scorer names (``metrics_service/api/schema.py``).
REGISTRY_ENUMS_IN_BODIES: dict = {}
REGISTRY_ENUMS_IN_QUERIES = {("/api/campaigns/", "get", "kind"): _campaign_kinds}


def state_registry_constraints(result, generator, request, public):
    """Values the API takes from a registry, stated as enums in the schema."""
    schemas = result.get("components", {}).get("schemas", {})
    for (component, prop), values in REGISTRY_ENUMS_IN_BODIES.items():
        for name in (component, "Patched" + component):
            field = schemas.get(name, {}).get("properties", {}).get(prop)
            if field is not None:
                (field["items"] if field.get("type") == "array" else field)["enum"] = values()
    for (path, method, name), values in REGISTRY_ENUMS_IN_QUERIES.items():
        for parameter in result.get("paths", {}).get(path, {}).get(method, {}).get("parameters", []):
            if parameter["in"] == "query" and parameter["name"] == name:
                parameter["schema"]["enum"] = values()
    # A body with required fields is itself required (drf-spectacular leaves a PATCH body optional).
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            for media in (body or {}).get("content", {}).values():
                schema = media.get("schema", {})
                schema = schemas.get(schema.get("$ref", "").rpartition("/")[2], schema)
                if schema.get("required"):
                    body["required"] = True
    return result


#: PostgreSQL text cannot hold NUL, so the API refuses it anywhere in a request (``annotate.request_limits``);
#: stated on every free-text string of the schema, so a client (or a fuzzer) knows before it sends one.
NO_NUL_PATTERN = "^[^\\u0000]*$"
_SUBSCHEMA_KEYS = ("items", "additionalProperties", "not")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def _forbid_nul(schema: dict) -> None:
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "string" and not ({"enum", "pattern", "format", "$ref"} & set(schema)):
        schema["pattern"] = NO_NUL_PATTERN
    for sub in (schema.get("properties") or {}).values():
        _forbid_nul(sub)
    for key in _SUBSCHEMA_KEYS:
        _forbid_nul(schema.get(key))
    for key in _SUBSCHEMA_LISTS:
        for sub in schema.get(key) or []:
            _forbid_nul(sub)


def state_text_constraints(result, generator, request, public):
    """Free-text strings (bodies, query and path parameters) may not contain NUL, and query options may not be
    empty: say so in the schema."""
    for component in result.get("components", {}).get("schemas", {}).values():
        _forbid_nul(component)
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict):
                for parameter in operation.get("parameters", []):
                    _forbid_nul(parameter.get("schema"))
                    # An empty query option is refused (leave it out for the default: annotate.api.query_options).
                    schema = parameter.get("schema") or {}
                    if parameter.get("in") == "query" and schema.get("type") == "string" and "enum" not in schema:
                        schema.setdefault("minLength", 1)
    return result
