"""LangChain / LangGraph middleware: a callback handler that turns a run
into one HERALD trace (issue 23).

- The start of the outermost chain or agent (LangGraph's graph run) is the
  trace's genesis.
- Each LLM call and each tool call is a reply envelope carrying ``model``,
  ``tools`` and ``temperature`` attestations (P12) taken from the run.
- Each tool result (or tool error) is a reply to its call, co-signed in
  scope ``tool_sandbox`` (P6) by the sandbox key.
- The end (or error) of the outermost run closes the trace.

The keys live in this handler (as ``herald.SigningKey`` objects, whose
secret never leaves Rust); nothing is added to prompts, messages, run
metadata or tags. Envelopes go to a trace file or a conduit
(``herald.open_sink``).

    handler = HeraldCallbackHandler(agent_key, "run.herald", tool_sandbox_key=sandbox_key)
    graph.invoke(inputs, config={"callbacks": [handler]})
    # herald verify run.herald --keyring keys/
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional, Union
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from ._native import Envelope, SigningKey, genesis, reply
from ._plain import plain
from .sink import Sink, open_sink

__all__ = ["HeraldCallbackHandler"]


def _model_of(serialized: Optional[dict], params: dict, metadata: dict) -> str:
    for candidate in (
        metadata.get("ls_model_name"),
        params.get("model"),
        params.get("model_name"),
        params.get("_type"),
        (serialized or {}).get("name"),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    return "unknown"


def _temperature_of(params: dict, metadata: dict) -> Optional[float]:
    for candidate in (params.get("temperature"), metadata.get("ls_temperature")):
        if isinstance(candidate, (int, float)) and not isinstance(candidate, bool) and candidate >= 0:
            return candidate
    return None


def _tool_names(params: dict) -> list[str]:
    names = []
    for tool in params.get("tools") or []:
        if isinstance(tool, dict):
            name = (tool.get("function") or {}).get("name") or tool.get("name")
        else:
            name = getattr(tool, "name", None)
        if isinstance(name, str):
            names.append(name)
    return names


class HeraldCallbackHandler(BaseCallbackHandler):
    """Record a LangChain/LangGraph run as one signed trace.

    ``key`` signs every envelope (the agent); ``tool_sandbox_key`` co-signs
    tool results (default: a fresh key made here, so the co-signature is
    always by another key than the origin, P13 ``duplicate_signer``).
    ``sink`` is a trace file path, an ``http://`` conduit URL, or any
    object with ``emit(envelope)``. Failing to record raises (a gap in the
    trace is never silent).
    """

    raise_error = True
    run_inline = True

    def __init__(
        self,
        key: SigningKey,
        sink: Union[str, "object", Sink],
        *,
        tool_sandbox_key: Optional[SigningKey] = None,
        to: Optional[str] = None,
    ) -> None:
        super().__init__()
        if not isinstance(key, SigningKey):
            raise TypeError("key must be a herald.SigningKey")
        self._key = key
        self._sandbox = tool_sandbox_key if tool_sandbox_key is not None else SigningKey.generate()
        self._sink = open_sink(sink)
        self._to = to
        self._lock = threading.RLock()
        self._root: Optional[UUID] = None
        self._head: Optional[Envelope] = None
        self._last_llm: Optional[Envelope] = None
        self._llm_context: dict[str, Any] = {}
        self._pending_llm: dict[UUID, dict[str, Any]] = {}
        self._tool_calls: dict[UUID, tuple[Envelope, str]] = {}
        self.envelopes: list[Envelope] = []
        """Every envelope recorded, in order, as the sink stored it."""

    def __repr__(self) -> str:
        return f"HeraldCallbackHandler({self._key.sigil}, sink={self._sink!r})"

    @property
    def sigil(self) -> str:
        """The agent's sigil (``from`` of every envelope)."""
        return self._key.sigil

    @property
    def sandbox_sigil(self) -> str:
        """The sigil that co-signs tool results."""
        return self._sandbox.sigil

    @property
    def trace(self) -> Optional[bytes]:
        """The current (or last) trace id."""
        return self._head.trace if self._head is not None else None

    # --- recording ---

    def _emit(self, envelope: Envelope) -> Envelope:
        stored = self._sink.emit(envelope)
        self.envelopes.append(stored)
        return stored

    def _start(self, payload: dict[str, Any]) -> Envelope:
        env = self._emit(genesis(self._key, payload, to=self._to))
        self._head = env
        self._last_llm = None
        self._llm_context = {}
        return env

    def _ensure_trace(self, run_id: UUID, event: str) -> None:
        if self._head is None:
            self._root = run_id
            self._start({"event": "run_start", "first": event, "run_id": str(run_id)})

    def _attestations(self, tools: Optional[list[str]] = None) -> list[tuple[str, Any]]:
        ctx = self._llm_context
        out: list[tuple[str, Any]] = [("model", ctx.get("model", "unknown"))]
        out.append(("tools", tools if tools is not None else ctx.get("tools", [])))
        if ctx.get("temperature") is not None:
            out.append(("temperature", ctx["temperature"]))
        return out

    def _reply(self, parent: Envelope, payload: dict[str, Any], attestations=None) -> Envelope:
        env = reply(self._key, parent, payload, to=self._to, attestations=attestations)
        return env

    # --- chains and agents ---

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
        with self._lock:
            if parent_run_id is not None or self._root is not None:
                return
            self._root = run_id
            name = kwargs.get("name") or (serialized or {}).get("name") or "chain"
            self._start(
                {"event": "chain_start", "name": plain(name), "run_id": str(run_id), "inputs": plain(inputs)}
            )

    def _finish(self, run_id: UUID, payload: dict[str, Any]) -> None:
        if run_id != self._root or self._head is None:
            return
        self._head = self._emit(self._reply(self._head, payload))
        self._root = None
        self._pending_llm.clear()
        self._tool_calls.clear()

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        with self._lock:
            self._finish(run_id, {"event": "chain_end", "run_id": str(run_id), "outputs": plain(outputs)})

    def on_chain_error(self, error, *, run_id, **kwargs):
        with self._lock:
            self._finish(run_id, {"event": "chain_error", "run_id": str(run_id), "error": repr(error)})

    # --- model calls ---

    def _llm_start(self, serialized, prompt: Any, run_id: UUID, kwargs: dict) -> None:
        params = kwargs.get("invocation_params") or {}
        metadata = kwargs.get("metadata") or {}
        with self._lock:
            self._ensure_trace(run_id, "llm_start")
            self._pending_llm[run_id] = {
                "model": _model_of(serialized, params, metadata),
                "temperature": _temperature_of(params, metadata),
                "tools": _tool_names(params),
                "input": plain(prompt),
            }

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self._llm_start(serialized, messages, run_id, kwargs)

    def on_llm_start(self, serialized, prompts, *, run_id, **kwargs):
        self._llm_start(serialized, prompts, run_id, kwargs)

    def _llm_done(self, run_id: UUID, output: dict[str, Any]) -> None:
        with self._lock:
            call = self._pending_llm.pop(run_id, None)
            if call is None or self._head is None:
                return
            self._llm_context = {k: call[k] for k in ("model", "temperature", "tools")}
            payload = {"event": "llm_call", "run_id": str(run_id), "input": call["input"], **output}
            env = self._emit(self._reply(self._head, payload, self._attestations()))
            self._head = env
            self._last_llm = env

    def on_llm_end(self, response, *, run_id, **kwargs):
        generations = []
        for batch in getattr(response, "generations", []) or []:
            for gen in batch:
                message = getattr(gen, "message", None)
                generations.append(plain(message) if message is not None else plain(getattr(gen, "text", gen)))
        self._llm_done(run_id, {"output": generations})

    def on_llm_error(self, error, *, run_id, **kwargs):
        self._llm_done(run_id, {"error": repr(error)})

    # --- tools ---

    def on_tool_start(self, serialized, input_str, *, run_id, inputs=None, **kwargs):
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        with self._lock:
            self._ensure_trace(run_id, "tool_start")
            parent = self._last_llm or self._head
            payload = {
                "event": "tool_call",
                "run_id": str(run_id),
                "tool": plain(name),
                "input": plain(inputs if inputs is not None else input_str),
            }
            env = self._emit(self._reply(parent, payload, self._attestations([str(name)])))
            self._tool_calls[run_id] = (env, str(name))

    def _tool_done(self, run_id: UUID, result: dict[str, Any]) -> None:
        with self._lock:
            call = self._tool_calls.pop(run_id, None)
            if call is None:
                return
            parent, name = call
            payload = {"event": "tool_result", "run_id": str(run_id), "tool": name, **result}
            env = self._reply(parent, payload).cosign(self._sandbox, "tool_sandbox", ts=int(time.time()))
            self._head = self._emit(env)

    def on_tool_end(self, output, *, run_id, **kwargs):
        self._tool_done(run_id, {"output": plain(output)})

    def on_tool_error(self, error, *, run_id, **kwargs):
        self._tool_done(run_id, {"error": repr(error)})
