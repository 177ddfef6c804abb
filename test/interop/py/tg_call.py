#!/usr/bin/env python3
"""Call a tool service the way a TrustGraph 2.11 agent does, with TrustGraph's own client.

The client is built as trustgraph-base's RequestResponseSpec.register builds it: a
RequestResponseClient over the async Pulsar backend, wrapped by _make_impl_wrapper around
ToolServiceClient. Then ToolServiceClient.call (or .call_streaming with --streaming) runs.

Output on stdout, one JSON object per line:
  {"chunk": "..."}            each chunk the streaming callback receives (--streaming only)
  {"result": "..."}           what call / call_streaming returned
  {"error": "<exception>"}    the tool answered with an error (exit 3)
  {"timeout": <seconds>}      no answer in time (exit 4)
With --count N every line also carries "n" (0..N-1). Exit 0 when every call returned a result.
"""

import argparse
import asyncio
import json
import logging
import os
import sys

from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.base.request_response_spec import _make_impl_wrapper
from trustgraph.base.tool_service_client import ToolServiceClient
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

EXIT_TOOL_ERROR = 3
EXIT_TIMEOUT = 4


def emit(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def json_object(text, flag):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise SystemExit(f"{flag} is not JSON: {e}")
    if not isinstance(value, dict):
        raise SystemExit(f"{flag} must be a JSON object")
    return value


async def one_call(client, n, args, config, arguments):
    tag = {} if args.count == 1 else {"n": n}
    try:
        if args.streaming:
            async def on_chunk(chunk):
                emit({**tag, "chunk": chunk})

            result = await client.call_streaming(config, arguments, on_chunk, timeout=args.timeout)
        else:
            result = await client.call(config, arguments, timeout=args.timeout)
    except asyncio.TimeoutError:
        emit({**tag, "timeout": args.timeout})
        return EXIT_TIMEOUT
    except RuntimeError as e:
        # ToolServiceClient raises RuntimeError(resp.error.message) on an error response.
        emit({**tag, "error": str(e)})
        return EXIT_TOOL_ERROR
    emit({**tag, "result": result})
    return 0


async def main(args):
    config = json_object(args.config, "--config")
    arguments = json_object(args.arguments, "--arguments")

    backend = get_async_pubsub(
        pubsub_backend="pulsar",
        pulsar_host=args.pulsar_host,
        pulsar_api_key=args.pulsar_api_key,
        pulsar_admin_url=args.pulsar_admin_url,
    )
    rr = await RequestResponseClient.create(
        backend=backend,
        request_topic=args.request_queue,
        response_topic=args.response_queue,
        request_schema=ToolServiceRequest,
        response_schema=ToolServiceResponse,
        default_timeout=args.timeout,
    )
    client = _make_impl_wrapper(rr, ToolServiceClient)
    try:
        if args.parallel:
            codes = await asyncio.gather(
                *(one_call(client, n, args, config, arguments) for n in range(args.count))
            )
        else:
            codes = [await one_call(client, n, args, config, arguments) for n in range(args.count)]
    finally:
        await client.close()
        await backend.close()
    return max(codes) if codes else 0


def parse():
    p = argparse.ArgumentParser(prog="tg_call", description=__doc__.splitlines()[0])
    p.add_argument("--pulsar-host", default="pulsar://127.0.0.1:6650")
    p.add_argument("--pulsar-admin-url", default="http://127.0.0.1:8080")
    p.add_argument("--pulsar-api-key", default=None)
    p.add_argument("--request-queue", required=True, help="e.g. non-persistent://tg/request/joke or request:tg:joke")
    p.add_argument("--response-queue", required=True)
    p.add_argument("--config", default="{}", help="JSON object: the tool descriptor's config-param values")
    p.add_argument("--arguments", default="{}", help="JSON object: what the model supplied")
    p.add_argument("--streaming", action="store_true", help="use call_streaming instead of call")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds (call: whole call; call_streaming: per message)")
    p.add_argument("--count", type=int, default=1, help="make this many calls")
    p.add_argument("--parallel", action="store_true", help="make the --count calls at once")
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args()


if __name__ == "__main__":
    a = parse()
    logging.basicConfig(level=getattr(logging, a.log_level.upper()), stream=sys.stderr,
                        format="%(asctime)s tg_call %(levelname)s %(name)s: %(message)s")
    code = asyncio.run(main(a))
    # The Pulsar C++ client can abort ("terminate called without an active exception") while
    # the interpreter tears down its objects; everything is closed by now, so leave directly.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
