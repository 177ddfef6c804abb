#!/usr/bin/env python3
"""Publish a burst of tool requests at once with the Python pulsar-client, and count answers.

Each request is a TrustGraph ToolServiceRequest body with an `id` property of its own; the
answers are read on the response topic by a consumer that subscribes before the burst. A
batched burst is what TrustGraph's own producers send (the client's default batching); an
unbatched one is one broker message per request.

Prints one JSON line: {"sent": N, "answered": N, "errors": {"<type>": N}, "duplicates": N,
"missing": N}. Exit 0 whatever was answered: the caller judges.
"""

import argparse
import json
import sys
import time
import uuid

import pulsar


def parse():
    p = argparse.ArgumentParser(prog="burst", description=__doc__.splitlines()[0])
    p.add_argument("--pulsar-host", required=True)
    p.add_argument("--request-queue", required=True)
    p.add_argument("--response-queue", required=True)
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--batched", action="store_true", help="let the producer batch (TrustGraph's default)")
    p.add_argument("--config", default="{}", help="the request's config, JSON")
    p.add_argument("--arguments", default="{}", help="the request's arguments, JSON")
    p.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the last answer")
    p.add_argument("--quiet-after", type=float, default=5.0, help="stop this many seconds after the last answer")
    return p.parse_args()


def main():
    args = parse()
    client = pulsar.Client(args.pulsar_host, logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    consumer = client.subscribe(
        args.response_queue,
        f"burst-{uuid.uuid4().hex[:8]}",
        consumer_type=pulsar.ConsumerType.Exclusive,
        receiver_queue_size=10000,
    )
    producer = client.create_producer(
        args.request_queue,
        batching_enabled=args.batched,
        batching_max_messages=1000,
        batching_max_publish_delay_ms=10,
        block_if_queue_full=True,
        max_pending_messages=args.count + 1,
    )
    body = json.dumps({"config": args.config, "arguments": args.arguments}).encode("utf-8")
    ids = [uuid.uuid4().hex for _ in range(args.count)]
    for i in ids:
        producer.send_async(body, None, properties={"id": i})
    producer.flush()

    want = set(ids)
    answered = set()
    errors = {}
    duplicates = 0
    deadline = time.monotonic() + args.wait
    last = time.monotonic()
    while time.monotonic() < deadline and len(answered) < len(want):
        if answered and time.monotonic() - last > args.quiet_after:
            break
        try:
            msg = consumer.receive(timeout_millis=200)
        except pulsar.Timeout:
            continue
        consumer.acknowledge(msg)
        rid = msg.properties().get("id")
        if rid not in want:
            continue
        body = json.loads(msg.data())
        if body.get("end_of_stream") is False:
            continue
        if rid in answered:
            duplicates += 1
            continue
        answered.add(rid)
        last = time.monotonic()
        err = body.get("error")
        if err:
            errors[err.get("type", "?")] = errors.get(err.get("type", "?"), 0) + 1
    out = {"sent": len(ids), "answered": len(answered), "errors": errors, "duplicates": duplicates, "missing": len(want) - len(answered)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    client.close()


if __name__ == "__main__":
    main()
