"""herald.crewai: a CrewAI crew (a scripted LLM, two real tools, two
tasks, no network) recorded as one trace that `herald verify` calls valid,
with task, LLM and tool envelopes in run order."""

from __future__ import annotations

import json
import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.tools import tool  # noqa: E402

import herald  # noqa: E402
from conftest import run_cli  # noqa: E402
from herald.crewai import HeraldCrewRecorder  # noqa: E402


class ScriptedLLM(BaseLLM):
    """Answers from a script, in CrewAI's ReAct text format."""

    script: list = []

    def call(self, messages, tools=None, callbacks=None, available_functions=None, from_task=None,
             from_agent=None, response_model=None, **kwargs):
        return self.script.pop(0)

    def supports_function_calling(self) -> bool:
        return False


@tool("multiply")
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool("shout")
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def test_crew_run_is_one_valid_trace(tmp_path, keys, herald_bin):
    llm = ScriptedLLM(
        model="scripted-crew-1",
        temperature=0.3,
        script=[
            'Thought: multiply first.\nAction: multiply\nAction Input: {"a": 6, "b": 7}',
            "Thought: I now know the final answer\nFinal Answer: 42",
            'Thought: shout it.\nAction: shout\nAction Input: {"text": "forty-two"}',
            "Thought: I now know the final answer\nFinal Answer: FORTY-TWO",
        ],
    )
    agent = Agent(role="calculator", goal="compute", backstory="careful", llm=llm, tools=[multiply, shout])
    tasks = [
        Task(description="multiply 6 by 7", expected_output="a number", agent=agent),
        Task(description="shout the answer", expected_output="upper-case text", agent=agent),
    ]
    trace = tmp_path / "crew.herald"
    recorder = HeraldCrewRecorder(keys["agent"], trace, tool_sandbox_key=keys["sandbox"])
    result = recorder.kickoff(Crew(agents=[agent], tasks=tasks))
    assert str(result.raw) == "FORTY-TWO"

    envs = herald.read_trace(trace)
    events = [e.payload["event"] for e in envs]
    assert events == [
        "crew_kickoff",
        "task_start", "llm_call", "tool_call", "tool_result", "llm_call", "task_end",
        "task_start", "llm_call", "tool_call", "tool_result", "llm_call", "task_end",
        "crew_end",
    ]
    for prev, env in zip(envs, envs[1:]):
        assert env.trace == envs[0].id
        # Tool calls answer the LLM call that asked for them; all else the previous envelope.
        assert env.parent == prev.id
    mult_call, mult_result = envs[3], envs[4]
    assert mult_call.payload["tool"] == "multiply" and mult_call.payload["input"] == {"a": 6, "b": 7}
    assert "42" in json.dumps(mult_result.payload["output"])
    assert [s["scope"] for s in mult_result.signatures] == ["origin", "tool_sandbox"]
    assert mult_result.signatures[1]["by"] == keys["sandbox"].sigil
    llm_call = envs[2]
    assert llm_call.attestation("model") == "scripted-crew-1"
    assert llm_call.attestation("temperature") == 0.3
    assert llm_call.attestation("tools") == ["multiply", "shout"]
    assert mult_call.attestation("tools") == ["multiply"]
    assert envs[6].payload["output"] == "42" and envs[-1].payload["output"] == "FORTY-TWO"

    cli = run_cli(herald_bin, "verify", "--json", "--keyring", keys["dir"], trace)
    assert cli.returncode == 0, cli.stdout
    assert json.loads(cli.stdout)["summary"]["valid"] == len(envs)
    seed = (keys["dir"] / "agent.key").read_text().splitlines()[1]
    assert seed not in trace.read_bytes().hex() and seed not in repr(result)
