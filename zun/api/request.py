"""The request object handlers receive: WebOb plus the context and the microversion."""

from __future__ import annotations

from typing import Any

import webob

from zun.api import json_input
from zun.api.errors import HTTPError
from zun.api.microversion import Version
from zun.common.context import RequestContext

JSON_TYPE = "application/json"
# What clients send nearly always (keystoneauth, curl): known to allow JSON without parsing.
_ACCEPTS_JSON = frozenset({"", JSON_TYPE, "*/*"})


class ApiRequest(webob.Request):
    context: RequestContext
    version: Version
    request_id: str

    def body_json(self) -> Any:
        """The JSON body, ``{}`` when empty; a body that does not parse is a 400."""
        raw = self.body
        if not raw or not raw.strip():
            return {}
        try:
            return json_input.loads(raw)
        except json_input.BadJson as exc:
            raise HTTPError(400, f"The request body is not valid JSON: {exc}") from None

    def body_object(self) -> dict[str, Any]:
        body = self.body_json()
        if not isinstance(body, dict):
            raise HTTPError(400, "The request body must be a JSON object.")
        return body

    def query(self) -> dict[str, str]:
        """URL query parameters (last value wins, as in the original)."""
        return dict(self.GET.items())

    def merged_params(self) -> dict[str, Any]:
        """Query merged with a JSON object body, as the original's framework merges them."""
        merged: dict[str, Any] = dict(self.GET.items())
        if self.content_type == JSON_TYPE and self.body:
            try:
                body = json_input.loads(self.body)
            except json_input.BadJson as exc:
                # A body that parses but breaks a bound is refused; one that does not parse
                # at all is ignored, as the original's framework ignored it.
                if not exc.syntax:
                    raise HTTPError(400, f"The request body is not valid JSON: {exc}") from None
                body = None
            if isinstance(body, dict):
                merged.update(body)
        return merged

    def require_json_acceptable(self) -> None:
        """406 unless the Accept header allows JSON, the only type served.

        No header, ``*/*``, ``application/*`` and ``application/json`` (with any others) allow
        it, as does an unparsable header; a ``.json`` suffix on the path picks JSON whatever
        Accept says. The original's framework negotiated the same way.
        """
        if self.environ.get("HTTP_ACCEPT", "").strip() in _ACCEPTS_JSON:
            return  # WebOb's parse costs tens of microseconds a request
        if self.path_info.endswith(".json") or self.accept.acceptable_offers([JSON_TYPE]):
            return
        message = (
            f"The service answers only {JSON_TYPE}, which the Accept header "
            f"({self.headers.get('Accept', '')}) does not allow."
        )
        raise HTTPError(406, message, title=message)

    def require_json(self) -> None:
        """415 unless the body is declared as JSON (the five create routes)."""
        if self.content_type != JSON_TYPE:
            raise HTTPError(
                415, f"Unexpected content type: {self.content_type or 'none'}. Use {JSON_TYPE}."
            )

    def version_at_least(self, text: str) -> bool:
        return self.version >= Version.parse(text)
