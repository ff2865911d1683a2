"""CrewAI middleware: record a crew's run as one HERALD trace (docs/python.md).

    recorder = HeraldCrewRecorder(agent_key, "crew.herald", tool_sandbox_key=sandbox_key)
    result = recorder.kickoff(crew, inputs={...})
    # herald verify crew.herald --keyring keys/

- The kickoff is the trace's genesis; each task's start and end are
  envelopes; each LLM call is an envelope with ``model``, ``tools`` (the
  agent's) and ``temperature`` attestations (P12); each tool call is an
  envelope, and its result a reply co-signed ``tool_sandbox`` (P6).
- It uses CrewAI's synchronous execution hooks (``crewai.hooks``), which
  run inline and in order, not the event bus (whose handlers run on a
  thread pool, so their order is not the run's). The hooks are registered
  for the kickoff only and ignore other crews.
- The keys stay in the recorder (``herald.SigningKey``); the hooks never
  change a prompt, a tool input or a result.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from crewai.hooks import (
    register_after_llm_call_hook,
    register_after_tool_call_hook,
    register_before_llm_call_hook,
    register_before_tool_call_hook,
    unregister_after_llm_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_llm_call_hook,
    unregister_before_tool_call_hook,
)

from ._native import Envelope, SigningKey
from ._plain import plain
from ._recorder import Recording, TraceRecorder, temperature

__all__ = ["HeraldCrewRecorder"]


def _tool_names(agent: Any) -> list[str]:
    return [str(getattr(t, "name", t)) for t in (getattr(agent, "tools", None) or [])]


def _output_of(task: Any) -> Any:
    output = getattr(task, "output", None)
    return plain(getattr(output, "raw", output))


class HeraldCrewRecorder(Recording):
    """Record crews' runs, one trace per ``kickoff``."""

    def __init__(
        self,
        key: SigningKey,
        sink: Any,
        *,
        tool_sandbox_key: Optional[SigningKey] = None,
        to: Optional[str] = None,
    ) -> None:
        self._recorder = TraceRecorder(key, sink, tool_sandbox_key=tool_sandbox_key, to=to)
        self._crew: Any = None
        self._task: Any = None
        self._pending_llm: dict[int, Any] = {}
        self._tool_calls: dict[int, list[tuple[Envelope, str]]] = {}

    # --- the run ---

    def kickoff(self, crew: Any, inputs: Optional[dict[str, Any]] = None) -> Any:
        """Run ``crew.kickoff(inputs=inputs)`` and record it as one trace."""
        hooks = [
            (register_before_llm_call_hook, unregister_before_llm_call_hook, self._before_llm),
            (register_after_llm_call_hook, unregister_after_llm_call_hook, self._after_llm),
            (register_before_tool_call_hook, unregister_before_tool_call_hook, self._before_tool),
            (register_after_tool_call_hook, unregister_after_tool_call_hook, self._after_tool),
        ]
        with self._recorder.lock:
            if self._crew is not None:
                raise RuntimeError("this recorder is already recording a kickoff")
            self._crew = crew
            self._task = None
            self._recorder.start(
                {
                    "event": "crew_kickoff",
                    "crew": plain(getattr(crew, "name", None)),
                    "inputs": plain(inputs),
                    "tasks": [plain(getattr(t, "description", t)) for t in getattr(crew, "tasks", [])],
                }
            )
        for register, _, hook in hooks:
            register(hook)
        try:
            result = crew.kickoff(inputs=inputs)
        except BaseException as error:
            with self._recorder.lock:
                self._close_task()
                self._recorder.finish({"event": "crew_error", "error": repr(error)})
            raise
        finally:
            for _, unregister, hook in hooks:
                unregister(hook)
            self._crew = None
        with self._recorder.lock:
            self._close_task()
            self._recorder.finish({"event": "crew_end", "output": plain(getattr(result, "raw", result))})
        return result

    def _ours(self, ctx: Any) -> bool:
        crew = getattr(ctx, "crew", None)
        return self._crew is not None and (crew is None or crew is self._crew)

    def _close_task(self) -> None:
        if self._task is not None:
            self._recorder.event(
                {"event": "task_end", "task": plain(getattr(self._task, "description", None)),
                 "output": _output_of(self._task)}
            )
            self._task = None

    def _enter_task(self, ctx: Any) -> None:
        task = getattr(ctx, "task", None)
        if task is None or task is self._task:
            return
        self._close_task()
        self._task = task
        self._recorder.event(
            {
                "event": "task_start",
                "task": plain(getattr(task, "description", None)),
                "agent": plain(getattr(getattr(ctx, "agent", None), "role", None)),
            }
        )

    # --- hooks (return None: they observe, never change the run) ---

    def _before_llm(self, ctx: Any) -> None:
        if not self._ours(ctx):
            return None
        with self._recorder.lock:
            self._enter_task(ctx)
            self._pending_llm[threading.get_ident()] = plain(list(getattr(ctx, "messages", None) or []))
        return None

    def _after_llm(self, ctx: Any) -> None:
        if not self._ours(ctx):
            return None
        llm = getattr(ctx, "llm", None)
        with self._recorder.lock:
            messages = self._pending_llm.pop(threading.get_ident(), None)
            self._recorder.llm_call(
                {"event": "llm_call", "input": messages, "output": plain(getattr(ctx, "response", None))},
                model=str(getattr(llm, "model", None) or llm or "unknown"),
                tools=_tool_names(getattr(ctx, "agent", None)),
                temperature=temperature(getattr(llm, "temperature", None)),
            )
        return None

    def _before_tool(self, ctx: Any) -> None:
        if not self._ours(ctx):
            return None
        name = str(getattr(ctx, "tool_name", "tool"))
        with self._recorder.lock:
            self._enter_task(ctx)
            env = self._recorder.tool_call(
                {"event": "tool_call", "tool": name, "input": plain(getattr(ctx, "tool_input", None))}, name
            )
            self._tool_calls.setdefault(threading.get_ident(), []).append((env, name))
        return None

    def _after_tool(self, ctx: Any) -> None:
        if not self._ours(ctx):
            return None
        with self._recorder.lock:
            stack = self._tool_calls.get(threading.get_ident()) or []
            if not stack:
                return None
            call, name = stack.pop()
            self._recorder.tool_result(
                call, {"event": "tool_result", "tool": name, "output": plain(getattr(ctx, "tool_result", None))}
            )
        return None
