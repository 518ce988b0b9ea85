"""A Python SDK 2.x `MCPServer` with one gateway-style write, for the relayed -32020 / -32022 case:

    python py_relay.py --port P --effects FILE

`charge` records its effect (a JSON line in FILE), then — on the first charge of an intent, when asked with
`relay` — raises the `MCPError` its downstream MCP server answered (-32020 header mismatch, -32022 unsupported
version). The SDK passes an `MCPError` raised inside a tool through as the `tools/call` error, and at 2026-07-28
maps it to an HTTP status by the same table as its transport's own refusals (`mcp/shared/inbound.py`,
"consulted for classifier-origin *and* handler-origin errors"): a 400, after the tool ran.
"""

import argparse
import json
import os

import uvicorn
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--effects", required=True)
opts = ap.parse_args()

mcp = MCPServer("relay")


def charges(intent):
    try:
        with open(opts.effects) as f:
            return sum(1 for line in f if line.strip() and json.loads(line)["intent"] == intent)
    except FileNotFoundError:
        return 0


@mcp.tool(description="Charge a card through the payments MCP server (a write; not safe to repeat).")
def charge(amount: float, intent: str, relay: int = 0) -> str:
    with open(opts.effects, "a") as f:
        f.write(json.dumps({"tool": "charge", "intent": intent, "pid": os.getpid()}) + "\n")
    if relay and charges(intent) == 1:
        data = {"supported": ["2026-07-28"], "requested": "2025-03-26"} if relay == -32022 else None
        raise MCPError(relay, "downstream: " + ("header mismatch" if relay == -32020 else "unsupported version"), data)
    return f"charged {amount}"


inner = mcp.streamable_http_app()


async def app(scope, receive, send):
    if scope["type"] == "http" and scope["path"] == "/health":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        return await send({"type": "http.response.body", "body": b"ok"})
    return await inner(scope, receive, send)


uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")
