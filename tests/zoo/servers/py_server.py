"""A real MCP server of the Python SDK (mcp 2.x, MCPServer), stateless with JSON answers, under uvicorn.

    python py_server.py --port P --effects FILE [--slow MS]

Run by the zoo as its own process. The parent imports everything once, then forks the serving child; when a
fault kills the child (SIGKILL while a tool runs), the parent forks a fresh one at once, the way a process
manager restarts a crashed worker, without paying the imports again. Both go when stdin closes (the zoo went
away) or on SIGTERM.

Every tool takes an `intent` and records what it did as a JSON line in FILE (start, effect, end,
tool_error, kill), like the TypeScript servers. A request's fault comes in the `x-zoo-fault` header.
"""

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
import time
import uuid

import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

NAME = "python"
ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--effects", required=True)
ap.add_argument("--slow", type=int, default=900)
opts = ap.parse_args()


def record(**ev):
    line = json.dumps({**ev, "srv": NAME, "pid": os.getpid(), "at": int(time.time() * 1000)}) + "\n"
    fd = os.open(opts.effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


# The fault for the request in flight, by intent, and the connection it came on.
faults: dict[str, dict] = {}


def build_app():
    mcp = MCPServer("zoo-python")

    async def run(tool: str, intent: str) -> str:
        f = faults.pop(intent, None) or {}
        fault = f.get("fault", "pass")
        exec_id = str(uuid.uuid4())
        record(ev="start", tool=tool, intent=intent, exec=exec_id, fault=fault)
        try:
            await asyncio.sleep(0.005)  # the tool's own I/O
            if fault == "kill_during":
                record(ev="kill", tool=tool, intent=intent, exec=exec_id)
                os.kill(os.getpid(), signal.SIGKILL)
            if fault == "tool_error":
                record(ev="tool_error", tool=tool, intent=intent, exec=exec_id)
                raise ToolError(f"{tool} refused: the zoo asked for a tool error")
            if fault == "slow":
                await asyncio.sleep(opts.slow / 1000)
            effect = uuid.uuid4().hex[:8]
            record(ev="effect", tool=tool, intent=intent, exec=exec_id, id=effect)
            if fault == "cut_after_commit" and f.get("transport") is not None:
                f["transport"].abort()  # committed; the connection goes before one byte of the answer
            elif fault == "midstream":
                f["cut_body"] = True  # the answer starts, then dies mid-body (see the middleware)
            return f"{tool} done, effect:{effect}"
        finally:
            record(ev="end", tool=tool, intent=intent, exec=exec_id)

    @mcp.tool(description="Look a ticket up (read-only).", annotations=ToolAnnotations(readOnlyHint=True))
    async def lookup(intent: str) -> str:
        return await run("lookup", intent)

    @mcp.tool(
        description="Set a ticket status (idempotent: the same input twice has no further effect).",
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True),
    )
    async def set_status(intent: str, status: str) -> str:
        return await run("set_status", intent)

    @mcp.tool(
        description="Create a ticket (a write; not safe to repeat).",
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False),
    )
    async def create_ticket(intent: str, title: str) -> str:
        return await run("create_ticket", intent)

    inner = mcp.streamable_http_app(stateless_http=True, json_response=True)

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return await inner(scope, receive, send)
        if scope["path"] == "/health":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            return await send({"type": "http.response.body", "body": f"ok {NAME} {os.getpid()}".encode()})
        headers = dict(scope["headers"])
        fault = headers.get(b"x-zoo-fault", b"").decode()
        if not fault:
            return await inner(scope, receive, send)
        # Read the body once and hand it on unchanged.
        chunks, more = [], True
        while more:
            m = await receive()
            chunks.append(m.get("body", b""))
            more = m.get("more_body", False)
        body = b"".join(chunks)
        try:
            msg = json.loads(body or b"null")
        except ValueError:
            msg = None
        if not (isinstance(msg, dict) and msg.get("method") == "tools/call"):
            return await inner(scope, _replay(body, receive), send)
        # uvicorn's send is a bound method of the request cycle, which holds the connection's transport.
        transport = getattr(getattr(send, "__self__", None), "transport", None)
        if fault == "drop_before":
            if transport is not None:
                transport.abort()  # received, never dispatched
            return
        entry = {"fault": fault, "transport": transport}
        faults[((msg.get("params") or {}).get("arguments") or {}).get("intent")] = entry

        async def cutting_send(message):
            if entry.get("cut_body") and message["type"] == "http.response.body":
                data = message.get("body", b"")
                await send({"type": "http.response.body", "body": data[: max(1, len(data) // 2)], "more_body": True})
                await asyncio.sleep(0.02)
                if transport is not None:
                    transport.abort()
                return
            await send(message)

        return await inner(scope, _replay(body, receive), cutting_send)

    return app


def _replay(body, receive):
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def serve():
    config = uvicorn.Config(build_app(), host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    def announce():
        while not server.started:
            time.sleep(0.01)
        print(f"READY {NAME} {os.getpid()}", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    server.run()


def main():
    child = 0
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    # stdin closes when the zoo goes away, however it went.
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    while not stopping:
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            serve()
            os._exit(0)
        _, status = os.waitpid(child, 0)
        print(f"EXITED {NAME} {child} {status}", flush=True)


if __name__ == "__main__":
    main()
