#!/usr/bin/env python3
"""TrustGraph's own OpenAI text-completion processor (trustgraph-flow 2.11.1,
trustgraph.model.text_completion.openai), unchanged, on a config service of the test's own.

A TrustGraph processor takes the config service's request and response queues from
trustgraph.schema (only the push queue is a flag, --config-push-queue), so a test that runs its
own config service (config_service.py --config-topic NAME) must point the processor there:
--config-topic NAME sets request:tg:NAME and response:tg:NAME where trustgraph.base.async_processor
reads them, and the push queue to notify:tg:NAME. Every other argument goes to the processor as
given (-p PULSAR, -u OPENAI_BASE_URL, -k KEY, -m MODEL, --no-metrics, --no-loki-enabled, -l ...).

The processor then does what it does in a deployment: it reads the config of type
"processor:text-completion", starts each flow named there on the flow's request and response
queues (logging "Started flow: <workspace>/<flow>" on stderr), and answers TextCompletionRequests
through the OpenAI chat completions API at -u.
"""

import sys

import trustgraph.base.async_processor as async_processor
from trustgraph.model.text_completion.openai.llm import run


def main():
    argv = sys.argv[1:]
    if "--config-topic" in argv:
        i = argv.index("--config-topic")
        name = argv[i + 1]
        del argv[i:i + 2]
        async_processor.config_request_queue = f"request:tg:{name}"
        async_processor.config_response_queue = f"response:tg:{name}"
        argv += ["--config-push-queue", f"notify:tg:{name}"]
    sys.argv = [sys.argv[0], *argv]
    run()


if __name__ == "__main__":
    main()
