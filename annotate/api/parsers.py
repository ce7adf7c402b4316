"""The API's JSON parser: DRF's, with over-long integers and non-finite numbers refused in words
(:mod:`annotate.json_input`) instead of a message about the interpreter's settings."""
from __future__ import annotations

import codecs

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from annotate import json_input


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding") or "utf-8"
        try:
            return json_input.load(codecs.getreader(encoding)(stream))
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
