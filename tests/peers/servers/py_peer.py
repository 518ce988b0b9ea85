"""The Python MCP servers of the peer matrix, under uvicorn, stateful Streamable HTTP (SSE answers):

    python py_peer.py --kind fastmcp|mcpserver|lowlevel --port P --effects FILE

    fastmcp    FastMCP 4.x (`fastmcp`), its `http_app()`
    mcpserver  the Python SDK 2.x `MCPServer`, its `streamable_http_app()`
    lowlevel   the Python SDK 2.x low-level `Server(on_list_tools=..., on_call_tool=...)`

The same tools as every peer: create_ticket (no annotations), create_ticket_keyed (dedupes by its own
`operation_id` argument), slow (progress), fail_plain (raises), fail_after_effect (acts, then raises the SDK's
own `NoBackChannelError`: the -32600 a tool that elicits without a back-channel raises), bad_output (acts,
then returns output its outputSchema refuses). Effects are appended to FILE (one JSON line each) and read back
for the keyed dedupe: the "database" survives a restart. GET /counts → effects per intent; GET /health →
`ok KIND PID`.

The parent imports once and forks the serving child. When the child dies (the matrix kills it: a restart),
the parent waits for a line `start` on stdin before forking a new one (so "down, then back" is the matrix's
to time); it exits when stdin closes or on SIGTERM.
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

ap = argparse.ArgumentParser()
ap.add_argument("--kind", required=True, choices=["fastmcp", "mcpserver", "lowlevel"])
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--effects", required=True)
opts = ap.parse_args()
KIND = opts.kind

if KIND == "fastmcp":
    from fastmcp import Context, FastMCP
elif KIND == "mcpserver":
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context
else:
    import mcp_types as types
    from mcp.server import Server
from mcp.shared.exceptions import NoBackChannelError


def effects():
    try:
        with open(opts.effects) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def effect(tool, intent, op=None):
    """The tool's side effect: once per operation id when one is given. Returns the effect's id."""
    if op is not None:
        for e in effects():
            if e.get("op") == op:
                return e["id"]
    eid = uuid.uuid4().hex[:8]
    line = json.dumps({"srv": KIND, "intent": intent, "tool": tool, "id": eid, "op": op, "pid": os.getpid()}) + "\n"
    fd = os.open(opts.effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return eid


def counts():
    out = {}
    for e in effects():
        out[e["intent"]] = out.get(e["intent"], 0) + 1
    return out


async def create(tool, intent, op, delay_ms):
    eid = effect(tool, intent, op)
    await asyncio.sleep(delay_ms / 1000)
    return f"{tool} done, effect:{eid}"


async def slow_run(intent, steps, ms, report):
    for i in range(steps):
        await asyncio.sleep(ms / 1000)
        await report(i + 1, steps)
    return f"slow done, effect:{effect('slow', intent)}"


OUTPUT_SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def build_fastmcp():
    mcp = FastMCP(f"peers-{KIND}")

    @mcp.tool
    async def create_ticket(intent: str, title: str = "", delay_ms: int = 0) -> str:
        """Create a ticket (not idempotent)."""
        return await create("create_ticket", intent, None, delay_ms)

    @mcp.tool
    async def create_ticket_keyed(intent: str, operation_id: str, title: str = "", delay_ms: int = 0) -> str:
        """Create a ticket, once per operation_id."""
        return await create("create_ticket_keyed", intent, operation_id, delay_ms)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def slow(intent: str, ctx: Context, steps: int = 5, ms: int = 200) -> str:
        """Works for a while, reporting progress."""
        return await slow_run(intent, steps, ms, lambda p, t: ctx.report_progress(p, t))

    @mcp.tool
    async def fail_plain(intent: str) -> str:
        """Raises an error (the tool's own)."""
        raise ValueError("fail_plain: the tool failed")

    @mcp.tool
    async def fail_after_effect(intent: str) -> str:
        """Acts, then raises a protocol error."""
        effect("fail_after_effect", intent)
        raise NoBackChannelError("elicitation/create")

    @mcp.tool(output_schema=OUTPUT_SCHEMA)
    async def bad_output(intent: str) -> dict:
        """Acts, then returns output its schema refuses."""
        return {"n": f"effect:{effect('bad_output', intent)}"}

    return mcp.http_app(path="/mcp")


def build_mcpserver():
    mcp = MCPServer(f"peers-{KIND}")

    @mcp.tool(description="Create a ticket (not idempotent).")
    async def create_ticket(intent: str, title: str = "", delay_ms: int = 0) -> str:
        return await create("create_ticket", intent, None, delay_ms)

    @mcp.tool(description="Create a ticket, once per operation_id.")
    async def create_ticket_keyed(intent: str, operation_id: str, title: str = "", delay_ms: int = 0) -> str:
        return await create("create_ticket_keyed", intent, operation_id, delay_ms)

    @mcp.tool(description="Works for a while, reporting progress.", annotations={"readOnlyHint": True})
    async def slow(intent: str, ctx: Context, steps: int = 5, ms: int = 200) -> str:
        return await slow_run(intent, steps, ms, lambda p, t: ctx.report_progress(p, t))

    @mcp.tool(description="Raises an error (the tool's own).")
    async def fail_plain(intent: str) -> str:
        raise ValueError("fail_plain: the tool failed")

    @mcp.tool(description="Acts, then raises a protocol error.")
    async def fail_after_effect(intent: str) -> str:
        effect("fail_after_effect", intent)
        raise NoBackChannelError("elicitation/create")

    from typing import TypedDict

    class Out(TypedDict):
        n: float

    @mcp.tool(description="Acts, then returns output its schema refuses.", structured_output=True)
    async def bad_output(intent: str) -> Out:
        return {"n": f"effect:{effect('bad_output', intent)}"}  # type: ignore[typeddict-item]

    return mcp.streamable_http_app()


def build_lowlevel():
    def schema(props, required):
        return {"type": "object", "properties": props, "required": required}

    base = {"intent": {"type": "string"}, "title": {"type": "string"}, "delay_ms": {"type": "number"}}
    tools = [
        types.Tool(name="create_ticket", description="Create a ticket (not idempotent).", input_schema=schema(base, ["intent"])),
        types.Tool(
            name="create_ticket_keyed",
            description="Create a ticket, once per operation_id.",
            input_schema=schema({**base, "operation_id": {"type": "string"}}, ["intent", "operation_id"]),
        ),
        types.Tool(
            name="slow",
            description="Works for a while, reporting progress.",
            input_schema=schema({"intent": {"type": "string"}, "steps": {"type": "number"}, "ms": {"type": "number"}}, ["intent"]),
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(name="fail_plain", description="Raises an error.", input_schema=schema(base, ["intent"])),
        types.Tool(name="fail_after_effect", description="Acts, then raises a protocol error.", input_schema=schema(base, ["intent"])),
        types.Tool(name="bad_output", description="Acts, then returns bad output.", input_schema=schema(base, ["intent"]), output_schema=OUTPUT_SCHEMA),
    ]

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    def text(s, **kw):
        return types.CallToolResult(content=[types.TextContent(type="text", text=s)], **kw)

    async def call_tool(ctx, params):
        a = params.arguments or {}
        intent = a.get("intent", "")
        name = params.name
        if name in ("create_ticket", "create_ticket_keyed"):
            op = a.get("operation_id") if name == "create_ticket_keyed" else None
            return text(await create(name, intent, op, int(a.get("delay_ms", 0))))
        if name == "slow":
            return text(await slow_run(intent, int(a.get("steps", 5)), int(a.get("ms", 200)), lambda p, t: ctx.session.report_progress(p, t)))
        if name == "fail_plain":
            return text("fail_plain: the tool failed", is_error=True)
        if name == "fail_after_effect":
            effect(name, intent)
            raise NoBackChannelError("elicitation/create")
        if name == "bad_output":
            eid = effect(name, intent)
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"bad_output done, effect:{eid}")], structured_content={"n": f"effect:{eid}"})
        return text(f"no tool {name}", is_error=True)

    return Server(f"peers-{KIND}", on_list_tools=list_tools, on_call_tool=call_tool).streamable_http_app()


def build_app():
    inner = {"fastmcp": build_fastmcp, "mcpserver": build_mcpserver, "lowlevel": build_lowlevel}[KIND]()

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["path"] in ("/health", "/counts"):
            body = f"ok {KIND} {os.getpid()}" if scope["path"] == "/health" else json.dumps(counts())
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            return await send({"type": "http.response.body", "body": body.encode()})
        return await inner(scope, receive, send)

    return app


def serve():
    config = uvicorn.Config(build_app(), host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")
    uvicorn.Server(config).run()


def main():
    child = 0

    def stop(*_):
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    starts = threading.Semaphore(1)

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "start":
                starts.release()
        stop()

    threading.Thread(target=read_stdin, daemon=True).start()
    while True:
        starts.acquire()
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            serve()
            os._exit(0)
        _, status = os.waitpid(child, 0)
        print(f"EXITED {KIND} {child} {status}", flush=True)


if __name__ == "__main__":
    main()
