from dify_plugin.interfaces.agent import AgentProvider


class TestAgentProvider(AgentProvider):
    pass
