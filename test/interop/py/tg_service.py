#!/usr/bin/env python3
"""A tool service built on TrustGraph's own DynamicToolService (trustgraph-base).

It answers like a small joke tool, deterministically, so tests can check every byte:
  default            "<style> joke about <topic>"   (style from config, default "plain";
                                                    topic from arguments, default "nothing")
  arguments.fail     raises ValueError(<fail>): the base class answers with a
                     tool-service-error whose message is exactly <fail>
  arguments.as_json  returns {"config", "arguments", "tag"}: the base class sends it as JSON text
  arguments.sleep_ms waits that long first (to observe concurrency)
With --tag-in-response the text ends with " [<tag>]".

Topics: the base class serves non-persistent://tg/request/<topic> and answers on
non-persistent://tg/response/<topic> (--topic), subscribing Shared as "<id>-request" (--id).
Processes started with the same --id share the load.

Events on stdout, one JSON object per line, each with "tag" (--tag, default <id>@<pid>):
  {"event": "ready", ...}      subscribed; requests sent from now on are seen
  {"event": "request", "request_id": ..., "inflight": n}   a request reached invoke()
  {"event": "stopped"} / {"event": "failed", "error": ...}
SIGTERM or SIGINT stops it cleanly (exit 0).
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

from trustgraph.base import DynamicToolService

logger = logging.getLogger("tg_service")


def emit(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class EchoJokeService(DynamicToolService):

    def __init__(self, **params):
        super().__init__(**params)
        self.tag = params.get("tag") or f"{params.get('id')}@{os.getpid()}"
        self.tag_in_response = bool(params.get("tag_in_response"))
        self.inflight = 0
        self.current_request_id = {}

    async def on_request(self, msg, consumer, flow):
        # Record which request this process took, then let the base class do all the work.
        self.current_request_id[asyncio.current_task()] = msg.properties().get("id", "unknown")
        try:
            await super().on_request(msg, consumer, flow)
        finally:
            self.current_request_id.pop(asyncio.current_task(), None)

    async def invoke(self, config, arguments):
        self.inflight += 1
        try:
            emit({
                "event": "request",
                "tag": self.tag,
                "request_id": self.current_request_id.get(asyncio.current_task(), "unknown"),
                "inflight": self.inflight,
                "config": config,
                "arguments": arguments,
            })
            sleep_ms = arguments.get("sleep_ms")
            if sleep_ms:
                await asyncio.sleep(float(sleep_ms) / 1000.0)
            if arguments.get("fail"):
                raise ValueError(str(arguments["fail"]))
            if arguments.get("as_json"):
                return {"config": config, "arguments": arguments, "tag": self.tag}
            text = f"{config.get('style', 'plain')} joke about {arguments.get('topic', 'nothing')}"
            if self.tag_in_response:
                text += f" [{self.tag}]"
            return text
        finally:
            self.inflight -= 1


async def serve(args):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    tag = args.get("tag") or f"{args['id']}@{os.getpid()}"
    async with asyncio.TaskGroup() as tg:
        service = EchoJokeService(**args, taskgroup=tg)
        try:
            await service.start()
            emit({"event": "ready", "tag": tag, "id": args["id"], "topic": args["topic"],
                  "concurrency": args["concurrency"], "pid": os.getpid()})
            await stop.wait()
        finally:
            await service.stop()
    emit({"event": "stopped", "tag": tag})


def parse():
    p = argparse.ArgumentParser(prog="tg_service", description=__doc__.splitlines()[0])
    p.add_argument("--id", default="tw-echo-service", help="service id; the subscription is <id>-request")
    # TrustGraph's own flags: -p/--pulsar-host, --pulsar-admin-url, -t/--topic, --concurrency, -l/--log-level, ...
    DynamicToolService.add_args(p)
    p.add_argument("--tag", default=None, help="name this process in events (default <id>@<pid>)")
    p.add_argument("--tag-in-response", action="store_true", help="append ' [<tag>]' to text answers")
    return vars(p.parse_args())


if __name__ == "__main__":
    a = parse()
    logging.basicConfig(level=getattr(logging, a["log_level"].upper()), stream=sys.stderr,
                        format="%(asctime)s tg_service %(levelname)s %(name)s: %(message)s")
    code = 0
    try:
        asyncio.run(serve(a))
    except KeyboardInterrupt:
        pass
    except BaseException as e:  # noqa: BLE001 - report any start failure, then exit non-zero
        emit({"event": "failed", "error": repr(e)})
        code = 1
    # The Pulsar C++ client can abort while the interpreter tears down its objects; the
    # service is stopped by now, so leave directly.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
