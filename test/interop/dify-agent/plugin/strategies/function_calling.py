"""A small function-calling loop in the style of langgenius/agent's FunctionCalling strategy:
system = instruction, user = query; ask the model (streamed) with the tools; run every tool
call it makes through the host, feed the results back, until it answers or the rounds run out."""

import json
from collections.abc import Generator
from typing import Any

from pydantic import BaseModel

from dify_plugin.entities.agent import AgentInvokeMessage
from dify_plugin.entities.model.message import (
    AssistantPromptMessage,
    SystemPromptMessage,
    ToolPromptMessage,
    UserPromptMessage,
)
from dify_plugin.entities.tool import ToolInvokeMessage, ToolProviderType
from dify_plugin.interfaces.agent import AgentModelConfig, AgentStrategy, ToolEntity


class Params(BaseModel):
    query: str
    instruction: str | None = None
    model: AgentModelConfig
    tools: list[ToolEntity] | None = None
    context: Any = None
    maximum_iterations: int = 3


def tool_text(messages: Generator[ToolInvokeMessage, None, None]) -> str:
    parts = []
    for m in messages:
        if m.type == ToolInvokeMessage.MessageType.TEXT:
            parts.append(m.message.text)
        elif m.type == ToolInvokeMessage.MessageType.JSON:
            parts.append(json.dumps(m.message.json_object, ensure_ascii=False))
    return "".join(parts)


class FunctionCallingStrategy(AgentStrategy):
    def _invoke(self, parameters: dict[str, Any]) -> Generator[AgentInvokeMessage, None, None]:
        p = Params(**parameters)
        if p.query.startswith("file:"):
            # A file answer, which the SDK sends in 8 KiB blob chunks.
            yield self.create_blob_message(("toolwire " * 2000).encode(), meta={"mime_type": "text/plain", "filename": "notes.txt"})
            return
        tools = {t.identity.name: t for t in p.tools or []}
        prompt_tools = self._init_prompt_tools(list(tools.values()))
        messages = [*p.model.history_prompt_messages]
        messages.insert(0, SystemPromptMessage(content=p.instruction or ""))
        messages.append(UserPromptMessage(content=p.query))
        for step in range(1, p.maximum_iterations + 1):
            round_log = self.create_log_message(label=f"ROUND {step}", data={}, status=ToolInvokeMessage.LogMessage.LogStatus.START)
            yield round_log
            last = step == p.maximum_iterations
            text, calls = "", {}
            for chunk in self.session.model.llm.invoke(
                model_config=p.model,
                prompt_messages=messages,
                tools=[] if last else prompt_tools,
                stop=[],
                stream=True,
            ):
                delta = chunk.delta.message
                if isinstance(delta.content, str) and delta.content:
                    text += delta.content
                    if not calls:
                        yield self.create_text_message(delta.content)
                for c in delta.tool_calls:
                    calls[c.id] = c
            messages.append(AssistantPromptMessage(content=text, tool_calls=list(calls.values())))
            if not calls:
                yield self.finish_log_message(log=round_log, data={"output": text})
                return
            for c in calls.values():
                args = json.loads(c.function.arguments or "{}")
                call_log = self.create_log_message(
                    label=f"CALL {c.function.name}", data={"tool_name": c.function.name, "tool_call_args": args},
                    parent=round_log, status=ToolInvokeMessage.LogMessage.LogStatus.START,
                )
                yield call_log
                tool = tools.get(c.function.name)
                if tool is None:
                    result = f"there is not a tool named {c.function.name}"
                else:
                    result = tool_text(self.session.tool.invoke(
                        provider_type=ToolProviderType(tool.provider_type),
                        provider=tool.identity.provider,
                        tool_name=tool.identity.name,
                        parameters={**tool.runtime_parameters, **args},
                    ))
                yield self.finish_log_message(log=call_log, data={"output": result})
                messages.append(ToolPromptMessage(content=result, tool_call_id=c.id, name=c.function.name))
            yield self.finish_log_message(log=round_log, data={"tool_calls": len(calls)})
