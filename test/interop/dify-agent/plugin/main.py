from dify_plugin import DifyPluginEnv, Plugin

Plugin(DifyPluginEnv(MAX_REQUEST_TIMEOUT=120)).run()
