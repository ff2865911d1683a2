"""A LangGraph agent over langchain-core's fake chat model and two real
Python tools, no network: the run the middleware tests record."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

MODEL = "fake-chat-1"
TEMPERATURE = 0.25
TEXT = "signed envelopes for every agent"


class ToolCallingFakeModel(GenericFakeChatModel):
    """GenericFakeChatModel with a model name, a temperature and bind_tools."""

    model: str = MODEL
    temperature: float = TEMPERATURE

    def bind_tools(self, tools, **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def build_agent():
    script = iter(
        [
            AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_add"}]),
            AIMessage(
                content="", tool_calls=[{"name": "word_count", "args": {"text": TEXT}, "id": "call_count"}]
            ),
            AIMessage(content="2 + 3 = 5, and the text has 5 words."),
        ]
    )
    model = ToolCallingFakeModel(messages=script).bind_tools([add, word_count])

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([add, word_count]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def run_agent(callbacks):
    app = build_agent()
    return app.invoke(
        {"messages": [HumanMessage(content=f"What is 2 + 3, and how many words in {TEXT!r}?")]},
        config={"callbacks": callbacks},
    )
