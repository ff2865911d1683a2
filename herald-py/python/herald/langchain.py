"""LangChain / LangGraph middleware: a callback handler that turns a run
into one HERALD trace (docs/python.md).

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

from typing import Any, Optional
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from ._native import Envelope, SigningKey
from ._plain import plain
from ._recorder import Recording, TraceRecorder, temperature

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


class HeraldCallbackHandler(Recording, BaseCallbackHandler):
    """Record a LangChain/LangGraph run as one signed trace.

    ``key`` signs every envelope (the agent); ``tool_sandbox_key`` co-signs
    tool results (default: a fresh key made here, so the co-signature is
    always by another key than the origin, P13 ``duplicate_signer``).
    ``sink`` is a trace file path, an ``http://`` conduit URL, or any
    object with ``emit(envelope)``. Failing to record raises (a gap in the
    trace is never silent). One handler records one top-level run at a
    time; give concurrent runs a handler each.
    """

    raise_error = True
    run_inline = True

    def __init__(
        self,
        key: SigningKey,
        sink: Any,
        *,
        tool_sandbox_key: Optional[SigningKey] = None,
        to: Optional[str] = None,
    ) -> None:
        super().__init__()
        self._recorder = TraceRecorder(key, sink, tool_sandbox_key=tool_sandbox_key, to=to)
        self._root: Optional[UUID] = None
        self._pending_llm: dict[UUID, dict[str, Any]] = {}
        self._tool_calls: dict[UUID, tuple[Envelope, str]] = {}


    def _ensure_trace(self, run_id: UUID, event: str) -> None:
        if not self._recorder.active:
            self._root = run_id
            self._recorder.start({"event": "run_start", "first": event, "run_id": str(run_id)})

    # --- chains and agents ---

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
        with self._recorder.lock:
            if parent_run_id is not None or self._root is not None:
                return
            self._root = run_id
            name = kwargs.get("name") or (serialized or {}).get("name") or "chain"
            self._recorder.start(
                {"event": "chain_start", "name": plain(name), "run_id": str(run_id), "inputs": plain(inputs)}
            )

    def _finish(self, run_id: UUID, payload: dict[str, Any]) -> None:
        with self._recorder.lock:
            if run_id != self._root or not self._recorder.active:
                return
            self._recorder.finish(payload)
            self._root = None
            self._pending_llm.clear()
            self._tool_calls.clear()

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        self._finish(run_id, {"event": "chain_end", "run_id": str(run_id), "outputs": plain(outputs)})

    def on_chain_error(self, error, *, run_id, **kwargs):
        self._finish(run_id, {"event": "chain_error", "run_id": str(run_id), "error": repr(error)})

    # --- model calls ---

    def _llm_start(self, serialized, prompt: Any, run_id: UUID, kwargs: dict) -> None:
        params = kwargs.get("invocation_params") or {}
        metadata = kwargs.get("metadata") or {}
        with self._recorder.lock:
            self._ensure_trace(run_id, "llm_start")
            self._pending_llm[run_id] = {
                "model": _model_of(serialized, params, metadata),
                "temperature": temperature(params.get("temperature"))
                if "temperature" in params
                else temperature(metadata.get("ls_temperature")),
                "tools": _tool_names(params),
                "input": plain(prompt),
            }

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self._llm_start(serialized, messages, run_id, kwargs)

    def on_llm_start(self, serialized, prompts, *, run_id, **kwargs):
        self._llm_start(serialized, prompts, run_id, kwargs)

    def _llm_done(self, run_id: UUID, output: dict[str, Any]) -> None:
        with self._recorder.lock:
            call = self._pending_llm.pop(run_id, None)
            if call is None or not self._recorder.active:
                return
            payload = {"event": "llm_call", "run_id": str(run_id), "input": call["input"], **output}
            self._recorder.llm_call(
                payload, model=call["model"], tools=call["tools"], temperature=call["temperature"]
            )

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
        name = str(kwargs.get("name") or (serialized or {}).get("name") or "tool")
        with self._recorder.lock:
            self._ensure_trace(run_id, "tool_start")
            payload = {
                "event": "tool_call",
                "run_id": str(run_id),
                "tool": name,
                "input": plain(inputs if inputs is not None else input_str),
            }
            self._tool_calls[run_id] = (self._recorder.tool_call(payload, name), name)

    def _tool_done(self, run_id: UUID, result: dict[str, Any]) -> None:
        with self._recorder.lock:
            call = self._tool_calls.pop(run_id, None)
            if call is None:
                return
            env, name = call
            self._recorder.tool_result(env, {"event": "tool_result", "run_id": str(run_id), "tool": name, **result})

    def on_tool_end(self, output, *, run_id, **kwargs):
        self._tool_done(run_id, {"output": plain(output)})

    def on_tool_error(self, error, *, run_id, **kwargs):
        self._tool_done(run_id, {"error": repr(error)})
