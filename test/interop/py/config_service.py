#!/usr/bin/env python3
"""TrustGraph's real config service (trustgraph-flow 2.11.1) on Pulsar, over an in-memory table.

What runs here, and whose code it is:
  * TrustGraph's own code, unchanged: the config service Processor
    (trustgraph.config.service: queues, request handling, versioning, pokes, per-workspace
    queue discovery) and, for the optional gateway stand-in, the API gateway's
    ConfigReceiver, DispatcherManager, ConfigRequestor (its translator and
    RequestResponseClient) and RegistryRoutedVariableEndpoint (the /api/v1/{kind} handler
    with its operation registry, status codes and error bodies).
  * Ours: InMemoryConfigTableStore, which replaces the Cassandra-backed ConfigTableStore
    (patched into trustgraph.config.service.config, where Configuration constructs it);
    FixtureAuth, which replaces the gateway's IamAuth; the seeding of workspaces; the
    wiring, the ready line and the shutdown.

TrustGraph's real gateway (trustgraph.gateway.service.Api) cannot run here: it authenticates
every request through its IAM service (iam-svc, itself backed by Cassandra), fetches a signing
key from it at start and routes only to workspaces IAM and the config service know. So the
stand-in keeps the gateway's own dispatch path and swaps only IamAuth for FixtureAuth:
  - with --gateway-token T, a request must carry "Authorization: Bearer T", else 401
    {"error":"auth failure"} (IamAuth's own body); without it every caller is let in;
  - every caller's default workspace is "default"; authorisation always allows;
  - known workspaces come, as in TrustGraph, from the gateway's ConfigReceiver reading
    __workspaces__ from the config service.
Only POST /api/v1/config is served (the other kinds would need services that are not here).
As in TrustGraph, the gateway sends a config request to the per-workspace queue
request:tg:config:<workspace> (non-persistent://tg/request/config:<workspace>), never to the
system queue, and its translator drops ConfigResponse.error: a config-service error reaches
the HTTP caller as a 200 with {"version": 0, "values": [], "directory": [], "config": {}}.

The config service consumes non-persistent://tg/request/config (system queue: get, list,
getvalues, put, delete, config with "workspace" in the body, plus getvalues-all-ws and
getkeys-all-ws), answers on non-persistent://tg/response/config, pokes
non-persistent://tg/notify/config, and serves request:tg:config:<ws> for every key of type
"workspace" in workspace "__workspaces__". --workspaces (default "default") seeds those keys
with '{"enabled": true}' (what TrustGraph's bootstrap writes) before the service starts, at
version 0, so that the gateway path works from the start.

--config-topic NAME moves all three queues to request:tg:NAME, response:tg:NAME and
notify:tg:NAME (TrustGraph's own --config-request-queue/--config-response-queue/
--config-push-queue work too), so that fixtures running at once on one broker do not share
a subscription (the service subscribes Shared as "<id>" to the request queue and Exclusive as
"<id>" to the notify queue).

Stdout: one JSON line {"ready": true, "gateway": "http://127.0.0.1:N/" | null, ...} once the
service consumes its queues (and the gateway knows the workspaces), or {"failed": "..."}.
No Prometheus server is started (that happens only in Processor.launch, not used here).
SIGTERM or SIGINT stops it cleanly (exit 0).
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time

from aiohttp import web

import trustgraph.config.service.config as tg_config_module
from trustgraph.config.service.service import Processor
from trustgraph.config.service.config import WORKSPACES_NAMESPACE, WORKSPACE_TYPE

logger = logging.getLogger("config_service")

WORKSPACE_RECORD = '{"enabled": true}'


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class InMemoryConfigTableStore:
    """Drop-in for trustgraph.tables.config.ConfigTableStore, held in a dict.

    Same constructor and async methods, same return shapes:
      get_values -> [[key, value]]                 get_keys -> [key]
      get_values_all_ws -> [(workspace, key, value)]   get_keys_all_ws -> [(workspace, key)]
      get_all -> [(workspace, class, key, value)]  get_all_for_workspace -> [(class, key, value)]
      get_value -> value or None                   get_version -> int (starts at 0)
    Within one (workspace, class) keys come in ascending order, as Cassandra's clustering key
    returns them; across partitions Cassandra's order is its token order, here sorted.
    """

    def __init__(self, cassandra_host=None, cassandra_username=None,
                 cassandra_password=None, keyspace=None, replication_factor=1):
        self.keyspace = keyspace
        self.replication_factor = replication_factor
        # (workspace, class) -> {key: value}
        self.partitions = {}
        # The Cassandra store creates its counter row with "+ 0", so a fresh store reads 0.
        self.version = 0

    def seed(self, workspace, cls, key, value):
        self.partitions.setdefault((workspace, cls), {})[key] = value

    def _rows(self):
        for (workspace, cls) in sorted(self.partitions):
            part = self.partitions[(workspace, cls)]
            for key in sorted(part):
                yield workspace, cls, key, part[key]

    async def inc_version(self):
        self.version += 1

    async def get_version(self):
        return self.version

    async def put_config(self, workspace, cls, key, value):
        self.partitions.setdefault((workspace, cls), {})[key] = value

    async def get_value(self, workspace, cls, key):
        return self.partitions.get((workspace, cls), {}).get(key)

    async def get_values(self, workspace, cls):
        part = self.partitions.get((workspace, cls), {})
        return [[key, part[key]] for key in sorted(part)]

    async def get_values_all_ws(self, cls):
        return [(w, k, v) for (w, c, k, v) in self._rows() if c == cls]

    async def get_keys_all_ws(self, cls):
        return [(w, k) for (w, c, k, _v) in self._rows() if c == cls]

    async def get_all(self):
        return list(self._rows())

    async def get_all_for_workspace(self, workspace):
        return [(c, k, v) for (w, c, k, v) in self._rows() if w == workspace]

    async def get_keys(self, workspace, cls):
        return sorted(self.partitions.get((workspace, cls), {}))

    async def delete_key(self, workspace, cls, key):
        part = self.partitions.get((workspace, cls))
        if part is not None:
            part.pop(key, None)
            if not part:
                del self.partitions[(workspace, cls)]


# Configuration.__init__ looks the class up in its own module: replace it there.
tg_config_module.ConfigTableStore = InMemoryConfigTableStore


class FixtureAuth:
    """Stands in for trustgraph.gateway.auth.IamAuth: the members the gateway code uses."""

    def __init__(self, token):
        self.token = token
        # Maintained by the gateway's ConfigReceiver, as with IamAuth.
        self.known_workspaces = set()

    async def authenticate(self, request):
        from trustgraph.gateway.auth import Identity
        header = request.headers.get("Authorization", "")
        if self.token is not None:
            if header != f"Bearer {self.token}":
                # IamAuth's 401: the same status and body for every failure mode.
                raise web.HTTPUnauthorized(
                    text='{"error":"auth failure"}', content_type="application/json",
                )
            return Identity(handle="fixture", default_workspace="default",
                            principal_id="fixture", source="api-key")
        return Identity(handle="anonymous", default_workspace="default",
                        principal_id="anonymous", source="anonymous")

    async def authorise(self, identity, capability, resource, parameters,
                        request_id="", client_ip=""):
        return None

    @staticmethod
    def _extract_client_ip(request):
        try:
            return request.remote or ""
        except Exception:
            return ""


class Gateway:
    """TrustGraph's gateway dispatch path for /api/v1/config, with FixtureAuth for IamAuth."""

    def __init__(self, args):
        self.args = args
        self.runner = None
        self.loader = None
        self.url = None

    async def start(self):
        from trustgraph.base.pubsub import get_async_pubsub
        import trustgraph.gateway.config.receiver as receiver_module
        from trustgraph.gateway.config.receiver import ConfigReceiver
        from trustgraph.gateway.dispatch.manager import DispatcherManager
        from trustgraph.gateway.endpoint.registry_endpoint import RegistryRoutedVariableEndpoint

        a = self.args
        # The receiver takes the queue names from module globals; follow --config-topic.
        receiver_module.config_request_queue = a["config_request_queue"]
        receiver_module.config_response_queue = a["config_response_queue"]
        receiver_module.config_push_queue = a["config_push_queue"]

        # A client of its own, as the gateway is a process of its own in TrustGraph.
        self.backend = get_async_pubsub(**a)
        self.auth = FixtureAuth(a["gateway_token"])
        self.receiver = ConfigReceiver(self.backend, auth=self.auth)
        self.dispatcher_manager = DispatcherManager(
            backend=self.backend,
            config_receiver=self.receiver,
            prefix="gateway",
            queue_overrides={"config": {
                "request": a["config_request_queue"],
                "response": a["config_response_queue"],
            }},
            auth=self.auth,
            timeout=a["gateway_timeout"],
        )

        loaded = asyncio.Event()
        fetch_all = self.receiver.fetch_all_workspaces

        async def fetch_all_then_signal(*args, **kwargs):
            try:
                return await fetch_all(*args, **kwargs)
            finally:
                loaded.set()

        self.receiver.fetch_all_workspaces = fetch_all_then_signal
        # ConfigReceiver.start() is create_task(config_loader()); keep the task to stop it.
        self.loader = asyncio.create_task(self.receiver.config_loader())
        await asyncio.wait_for(loaded.wait(), timeout=60)

        app = web.Application(client_max_size=256 * 1024 * 1024)
        RegistryRoutedVariableEndpoint(
            endpoint_path="/api/v1/{kind:config}",
            auth=self.auth,
            dispatcher=self.dispatcher_manager.dispatch_global_service(),
        ).add_routes(app)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", a["gateway_port"])
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}/"

    async def stop(self):
        if self.runner is not None:
            await self.runner.cleanup()
        if self.loader is not None:
            self.loader.cancel()
            try:
                await self.loader
            except BaseException:
                pass
        for dispatcher in list(self.dispatcher_manager.dispatchers.values()):
            try:
                await dispatcher.stop()
            except Exception as e:
                logger.warning(f"stopping a gateway dispatcher: {e}")
        await self.backend.close()


def pulsar_topic(queue):
    # The mapping AsyncPulsarBackend._map_topic applies (class:topicspace:topic).
    if "://" in queue:
        return queue
    cls, space, topic = queue.split(":", 2)
    return f"{'persistent' if cls == 'flow' else 'non-persistent'}://{space}/{cls}/{topic}"


async def serve(args):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    t0 = time.monotonic()
    gateway = None
    processor_args = {k: v for k, v in args.items() if not k.startswith("gateway")}
    async with asyncio.TaskGroup() as tg:
        service = Processor(**processor_args, taskgroup=tg)
        for ws in args["workspaces"]:
            service.config.table_store.seed(WORKSPACES_NAMESPACE, WORKSPACE_TYPE, ws, WORKSPACE_RECORD)
        try:
            await service.start()
            if args["gateway"]:
                gateway = Gateway(args)
                await gateway.start()
            emit({
                "ready": True,
                "gateway": gateway.url if gateway else None,
                "pid": os.getpid(),
                "id": args["id"],
                "workspaces": args["workspaces"],
                "request": pulsar_topic(args["config_request_queue"]),
                "response": pulsar_topic(args["config_response_queue"]),
                "notify": pulsar_topic(args["config_push_queue"]),
                "seconds": round(time.monotonic() - t0, 3),
            })
            await stop.wait()
        finally:
            if gateway is not None:
                await gateway.stop()
            await service.stop()


def parse():
    p = argparse.ArgumentParser(prog="config_service", description=__doc__.splitlines()[0])
    p.add_argument("--id", default="config-svc", help="service id and subscription name (default: config-svc)")
    # TrustGraph's own flags: -p/--pulsar-host, --config-request-queue, --config-response-queue,
    # --config-push-queue, -l/--log-level, --metrics, --cassandra-* (ignored), ...
    Processor.add_args(p)
    p.set_defaults(metrics=False, loki_enabled=False, log_level="WARNING")
    p.add_argument("--config-topic", default=None,
                   help="use request:tg:NAME, response:tg:NAME, notify:tg:NAME for the three queues")
    p.add_argument("--workspaces", default="default",
                   help="comma-separated workspaces to register in __workspaces__ (default: default; '' for none)")
    p.add_argument("--gateway", action="store_true", help="also serve POST /api/v1/config (implied by the two below)")
    p.add_argument("--gateway-port", type=int, default=None, help="port for the gateway stand-in (0 or unset: a free one)")
    p.add_argument("--gateway-token", default=None, help="require 'Authorization: Bearer <token>' at the gateway")
    p.add_argument("--gateway-timeout", type=int, default=30, help="gateway request timeout, seconds (default: 30)")
    a = vars(p.parse_args())
    name = a.pop("config_topic")
    if name is not None:
        a["config_request_queue"] = f"request:tg:{name}"
        a["config_response_queue"] = f"response:tg:{name}"
        a["config_push_queue"] = f"notify:tg:{name}"
    a["workspaces"] = [w.strip() for w in a["workspaces"].split(",") if w.strip()]
    a["gateway"] = bool(a["gateway"] or a["gateway_port"] is not None or a["gateway_token"] is not None)
    a["gateway_port"] = a["gateway_port"] or 0
    return a


if __name__ == "__main__":
    a = parse()
    logging.basicConfig(level=getattr(logging, a["log_level"].upper()), stream=sys.stderr,
                        format="%(asctime)s config_service %(levelname)s %(name)s: %(message)s")
    code = 0
    try:
        asyncio.run(serve(a))
    except KeyboardInterrupt:
        pass
    except BaseException as e:  # noqa: BLE001 - report any start failure, then exit non-zero
        logger.error("config service failed", exc_info=True)
        emit({"failed": repr(e)})
        code = 1
    # The Pulsar C++ client can abort while the interpreter tears down its objects; all is
    # stopped by now, so leave directly.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
