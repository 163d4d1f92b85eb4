"""Integrations: connected social-platform accounts."""

from __future__ import annotations

from asyncclient.models.schedule import Integration
from asyncclient.resources._base import Resource, decode_or_raise

__all__ = ["Integrations"]

_LIST = "/v1/integration/list"


class Integrations(Resource):
    """``client.integrations``."""

    async def list(self) -> list[Integration]:
        """Every connected integration (connecting happens in the dashboard)."""
        envelope = await self._caller.call("GET", _LIST)
        data = envelope.get("data")
        raw = data.get("integrations") if isinstance(data, dict) else None
        return decode_or_raise(raw, list[Integration], envelope, path="data.integrations")
