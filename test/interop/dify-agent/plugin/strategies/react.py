"""A small ReAct loop in the style of langgenius/agent's ReAct strategy: text only, no tool
definitions sent to the model. The model writes `Action: {"action": name, "action_input": {...}}`
or `Final Answer: ...`; each action's observation is appended to the scratchpad."""

import json
import re
from collections.abc import Generator
from typing import Any

from pydantic import BaseModel

from dify_plugin.entities.agent import AgentInvokeMessage
from dify_plugin.entities.model.message import SystemPromptMessage, UserPromptMessage
from dify_plugin.entities.tool import ToolInvokeMessage, ToolProviderType
from dify_plugin.interfaces.agent import AgentModelConfig, AgentStrategy, ToolEntity

from strategies.function_calling import tool_text


class Params(BaseModel):
    query: str
    instruction: str | None = None
    model: AgentModelConfig
    tools: list[ToolEntity] | None = None
    context: Any = None
    maximum_iterations: int = 3


ACTION = re.compile(r"Action:\s*(\{.*\})", re.S)


class ReActStrategy(AgentStrategy):
    def _invoke(self, parameters: dict[str, Any]) -> Generator[AgentInvokeMessage, None, None]:
        p = Params(**parameters)
        tools = {t.identity.name: t for t in p.tools or []}
        described = "\n".join(
            f"{t.name}: {t.description} {json.dumps(t.parameters, sort_keys=True)}" for t in self._init_prompt_tools(list(tools.values()))
        )
        system = f"{p.instruction or ''}\n\nTools:\n{described}\n\nAnswer with `Action: {{json}}` or `Final Answer: text`."
        scratchpad = ""
        for step in range(1, p.maximum_iterations + 1):
            round_log = self.create_log_message(label=f"ROUND {step}", data={}, status=ToolInvokeMessage.LogMessage.LogStatus.START)
            yield round_log
            text = ""
            for chunk in self.session.model.llm.invoke(
                model_config=p.model,
                prompt_messages=[SystemPromptMessage(content=system), UserPromptMessage(content=p.query + scratchpad)],
                stop=["Observation:"],
                stream=True,
            ):
                if isinstance(chunk.delta.message.content, str):
                    text += chunk.delta.message.content
            m = ACTION.search(text)
            if not m:
                answer = text.split("Final Answer:", 1)[-1].strip()
                yield self.finish_log_message(log=round_log, data={"thought": text})
                yield self.create_text_message(answer)
                return
            action = json.loads(m.group(1))
            tool = tools.get(action.get("action", ""))
            if tool is None:
                observation = f"there is not a tool named {action.get('action')}"
            else:
                observation = tool_text(self.session.tool.invoke(
                    provider_type=ToolProviderType(tool.provider_type),
                    provider=tool.identity.provider,
                    tool_name=tool.identity.name,
                    parameters={**tool.runtime_parameters, **(action.get("action_input") or {})},
                ))
            yield self.finish_log_message(log=round_log, data={"thought": text, "observation": observation})
            scratchpad += f"\n{text}\nObservation: {observation}"
        yield self.create_text_message("the agent stopped: maximum iterations reached")
