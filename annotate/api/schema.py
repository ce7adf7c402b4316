"""OpenAPI post-processing: every operation documents the error answers the API can give.

DRF answers 400 (validation), 401/403 (authentication, role), 404 (not found or not readable), 429
(rate limits) and the broker-backed operations 503; declaring them keeps clients and schema-based fuzzing
(tests/test_schema_fuzz.py) in step with the server.
"""
from __future__ import annotations

ERROR = {"type": "object", "additionalProperties": True, "description": "`detail` says what is wrong; validation errors name each field."}
ERRORS = {
    "400": "Invalid parameters or body.",
    "401": "Not authenticated (missing, wrong or expired token).",
    "403": "Authenticated, but the role may not do this.",
    "404": "No such object, or not one the caller may read.",
    "405": "Method not allowed.",
    "406": "Not acceptable (unknown format).",
    "409": "Conflict: the object's state does not allow this (e.g. a finished campaign or job).",
    "413": "Upload above FACTLAB_MAX_UPLOAD_BYTES.",
    "415": "Unsupported media type.",
    "429": "Rate limit exceeded (see Retry-After).",
    "503": "The task queue (Redis) is unreachable; nothing was stored.",
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
    return result
