"""One trace of an agent run, shared by the framework middlewares
(``herald.langchain``, ``herald.crewai``): the genesis, LLM and tool calls
with ``model``/``tools``/``temperature`` attestations (P12), tool results
co-signed ``tool_sandbox`` (P6), and the end. Every envelope goes to the
sink before the next is made; the keys never leave this object."""

from __future__ import annotations

import threading
from typing import Any, Optional

from ._native import Envelope, SigningKey, genesis, reply, sandbox_cosign
from .sink import open_sink


def temperature(value: Any) -> Optional[float]:
    """``value`` when it is a P12 temperature (a number ≥ 0), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return value
    return None


class TraceRecorder:
    """Signs and emits the envelopes of one run at a time (thread-safe)."""

    def __init__(self, key: SigningKey, sink: Any, *, tool_sandbox_key: Optional[SigningKey] = None,
                 to: Optional[str] = None) -> None:
        if not isinstance(key, SigningKey):
            raise TypeError("key must be a herald.SigningKey")
        if tool_sandbox_key is not None and not isinstance(tool_sandbox_key, SigningKey):
            raise TypeError("tool_sandbox_key must be a herald.SigningKey")
        self._key = key
        # Another key than the origin's, always (P13 duplicate_signer).
        self._sandbox = tool_sandbox_key if tool_sandbox_key is not None else SigningKey.generate()
        # A trace file is created 0600 (FileSink: herald-agent's TraceFile).
        self.sink = open_sink(sink)
        self._to = to
        self.lock = threading.RLock()
        self.head: Optional[Envelope] = None
        self.last_llm: Optional[Envelope] = None
        self.context: dict[str, Any] = {}
        self.envelopes: list[Envelope] = []

    @property
    def sigil(self) -> str:
        return self._key.sigil

    @property
    def sandbox_sigil(self) -> str:
        return self._sandbox.sigil

    @property
    def active(self) -> bool:
        return self.head is not None

    @staticmethod
    def _require(parent: Optional[Envelope]) -> Envelope:
        if parent is None:
            raise RuntimeError("no trace started: start() makes its genesis first")
        return parent

    def _emit(self, envelope: Envelope) -> Envelope:
        stored = self.sink.emit(envelope)
        self.envelopes.append(stored)
        return stored

    def start(self, payload: dict[str, Any]) -> Envelope:
        """A new trace: its genesis."""
        with self.lock:
            self.head = self._emit(genesis(self._key, payload, to=self._to))
            self.last_llm = None
            self.context = {}
            return self.head

    def _attestations(self, tools: Optional[list[str]] = None) -> list[tuple[str, Any]]:
        ctx = self.context
        out: list[tuple[str, Any]] = [("model", ctx.get("model") or "unknown")]
        out.append(("tools", tools if tools is not None else list(ctx.get("tools") or [])))
        if ctx.get("temperature") is not None:
            out.append(("temperature", ctx["temperature"]))
        return out

    def event(self, payload: dict[str, Any]) -> Envelope:
        """A reply to the head (chain end, task end, ...)."""
        with self.lock:
            self._require(self.head)
            self.head = self._emit(reply(self._key, self._require(self.head), payload, to=self._to))
            return self.head

    def llm_call(self, payload: dict[str, Any], *, model: Optional[str], tools: list[str],
                 temperature: Optional[float]) -> Envelope:
        """One model call, replying to the head, attested with what the run used."""
        with self.lock:
            self._require(self.head)
            self.context = {"model": model, "tools": tools, "temperature": temperature}
            env = reply(self._key, self._require(self.head), payload, to=self._to, attestations=self._attestations())
            self.head = self.last_llm = self._emit(env)
            return env

    def tool_call(self, payload: dict[str, Any], tool: str) -> Envelope:
        """One tool call, replying to the model call that asked for it."""
        with self.lock:
            parent = self.last_llm or self.head
            self._require(parent)
            env = reply(self._key, parent, payload, to=self._to, attestations=self._attestations([tool]))
            return self._emit(env)

    def tool_result(self, call: Envelope, payload: dict[str, Any]) -> Envelope:
        """A tool's result, replying to its call, co-signed ``tool_sandbox``
        without a ``ts`` (the rule of every HERALD recorder, PROFILE P5)."""
        with self.lock:
            env = reply(self._key, call, payload, to=self._to)
            env = sandbox_cosign(env, self._sandbox)
            self.head = self._emit(env)
            return self.head

    def finish(self, payload: dict[str, Any]) -> Envelope:
        """The run's end: a reply to the head; the next run starts a new trace."""
        with self.lock:
            env = self.event(payload)
            self.head = None
            self.last_llm = None
            return env


class Recording:
    """What a middleware shows of its recorder: sigils and envelopes, never keys."""

    _recorder: TraceRecorder

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sigil}, sink={self._recorder.sink!r})"

    @property
    def sigil(self) -> str:
        """The agent's sigil (``from`` of every envelope)."""
        return self._recorder.sigil

    @property
    def sandbox_sigil(self) -> str:
        """The sigil that co-signs tool results."""
        return self._recorder.sandbox_sigil

    @property
    def envelopes(self) -> list[Envelope]:
        """Every envelope recorded, in order, as the sink stored it."""
        return self._recorder.envelopes
