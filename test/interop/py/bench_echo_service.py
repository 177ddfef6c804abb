"""
An echo tool service on TrustGraph's own DynamicToolService (trustgraph-base), for the
benchmark's three-way comparison (`npm run bench`). Everything per request is TrustGraph's:
ReceiverPool workers (--concurrency), on_request (decode, invoke, respond), SenderPool.

One thing differs from the stock start(): the stock service always uses
non-persistent://tg/request/<topic> and non-persistent://tg/response/<topic>. The benchmark
gives every target fresh topics of the same kind (a persistent request topic, like the
echo-service example), so --request-queue / --response-queue name them in full; without
them the stock start() runs unchanged.
"""

import json

from trustgraph.base.async_processor import AsyncProcessor
from trustgraph.base.dynamic_tool_service import DynamicToolService
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

default_ident = "bench-echo-service"


class Processor(DynamicToolService):

    def __init__(self, **params):
        super().__init__(**params)
        self.request_queue = params.get("request_queue")
        self.response_queue = params.get("response_queue")

    async def start(self):
        if not self.request_queue or not self.response_queue:
            await super().start()
            return
        # DynamicToolService.start() with the topics given: same pools, same handler.
        await AsyncProcessor.start(self)
        self._producer_handle = await self.sender_pool.add_producer(
            topic=self.response_queue,
            schema=ToolServiceResponse,
        )

        async def handler(message):
            await self.on_request(message, None, None)

        self._consumer_reg = await self.receiver_pool.add_consumer(
            topic=self.request_queue,
            subscription=f"{self.id}-request",
            schema=ToolServiceRequest,
            handler=handler,
        )
        print(f"bench echo service {self.id} serving {self.request_queue}", flush=True)

    async def invoke(self, config, arguments):
        text = arguments.get("text")
        if not isinstance(text, str):
            return json.dumps(arguments)
        chunks = arguments.get("chunks")
        if isinstance(chunks, (int, float)) and chunks >= 1:
            return text * int(chunks)
        return text

    @staticmethod
    def add_args(parser):
        DynamicToolService.add_args(parser)
        parser.add_argument("--request-queue", default=None, help="full request topic name")
        parser.add_argument("--response-queue", default=None, help="full response topic name")


if __name__ == "__main__":
    Processor.launch(default_ident, __doc__)
