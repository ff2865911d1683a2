"""Run data (LangChain messages, CrewAI outputs, pydantic models, UUIDs,
...) as plain values the P1 encoder takes. Middleware payloads only: the
encoder itself (``herald.encode``) refuses what it cannot encode; here a
value P1 has no form for (NaN, a custom object) is recorded as its
``repr`` text, so recording a run never fails on the run's own data."""

from __future__ import annotations

import math
import uuid
from typing import Any

_MAX_DEPTH = 24  # below P1's nesting limit of 32, leaving room for the payload's own maps


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as None/bool/int/float/str/bytes/list/dict[str, ...]."""
    if depth >= _MAX_DEPTH:
        return repr(value)
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, int):
        return value if -(2**64) <= value < 2**64 else str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(value)
        return 0 if value == 0 else value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v, depth + 1) for v in value]
    message = _message(value, depth)
    if message is not None:
        return message
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return plain(dump(), depth + 1)
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is shown by repr
            pass
    return repr(value)


def _message(value: Any, depth: int) -> Any:
    """A LangChain message as ``{type, content, tool_calls?, name?, tool_call_id?}``."""
    kind = getattr(value, "type", None)
    if not isinstance(kind, str) or not hasattr(value, "content"):
        return None
    out: dict[str, Any] = {"type": kind, "content": plain(value.content, depth + 1)}
    for field in ("name", "tool_call_id"):
        v = getattr(value, field, None)
        if v:
            out[field] = plain(v, depth + 1)
    calls = getattr(value, "tool_calls", None)
    if calls:
        out["tool_calls"] = plain(calls, depth + 1)
    return out
