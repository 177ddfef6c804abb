#!/usr/bin/env python3
"""Answer tool requests with exact bytes, to see what TrustGraph's client makes of them.

Uses the plain `pulsar` client (no TrustGraph code): subscribes Shared to
non-persistent://tg/request/<topic>, and for each of the next --requests requests prints it as
received, then sends every payload of --payloads (a JSON list of strings, each sent as UTF-8
bytes, unbatched) to non-persistent://tg/response/<topic> with the request's `id` property.

Events on stdout, one JSON object per line:
  {"event": "ready"}
  {"event": "request", "data": "<payload as text>", "properties": {...}, "key": "...", "batched": bool}
  {"event": "done"}
"""

import argparse
import json
import os
import sys

import pulsar


def emit(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(prog="raw_responder", description=__doc__.splitlines()[0])
    p.add_argument("--pulsar-host", default="pulsar://127.0.0.1:6650")
    p.add_argument("--topic", required=True)
    p.add_argument("--payloads", default="[]", help="JSON list of strings to answer with")
    p.add_argument("--requests", type=int, default=1)
    p.add_argument("--wait-ms", type=int, default=30000, help="give up waiting for a request after this long")
    a = p.parse_args()
    payloads = json.loads(a.payloads)
    if not isinstance(payloads, list) or not all(isinstance(x, str) for x in payloads):
        raise SystemExit("--payloads must be a JSON list of strings")

    client = pulsar.Client(a.pulsar_host, logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    consumer = client.subscribe(
        f"non-persistent://tg/request/{a.topic}", "raw-responder",
        consumer_type=pulsar.ConsumerType.Shared,
    )
    producer = client.create_producer(f"non-persistent://tg/response/{a.topic}", batching_enabled=False)
    emit({"event": "ready"})
    code = 0
    try:
        for _ in range(a.requests):
            msg = consumer.receive(timeout_millis=a.wait_ms)
            props = msg.properties()
            emit({
                "event": "request",
                "data": msg.data().decode("utf-8", errors="replace"),
                "properties": props,
                "key": msg.partition_key(),
                # A message id with a batch index >= 0 came out of a producer batch.
                "batched": msg.message_id().batch_index() >= 0,
            })
            for payload in payloads:
                producer.send(payload.encode("utf-8"), properties={"id": props.get("id", "")})
            consumer.acknowledge(msg)
        producer.flush()
        emit({"event": "done"})
    except Exception as e:  # noqa: BLE001 - reported, then a non-zero exit
        emit({"event": "failed", "error": repr(e)})
        code = 1
    finally:
        client.close()
    sys.stdout.flush()
    # Skip interpreter teardown: the C++ client may abort in its destructors.
    os._exit(code)


if __name__ == "__main__":
    main()
