"""A real MCP server of the Python SDK (mcp 2.x, `MCPServer`) over stdio, started as a child process by
tests/js/stdio-restart.test.mjs:

    python stdio_server.py        env: DB (a SQLite file), BLOCK ("1": every tool blocks once it has done its
                                  work, until the process ends)

Two tools: `lookup` (read-only) and `create_note` (unsafe). Each effect is a row in DB's `effects` table, written
before the tool blocks. With BLOCK=1 a tool writes {"ev": "blocked", "tool": ..., "pid": ...} on stderr after its
work and then waits for ever: the test kills or stops the process on that event, never on a timer.
"""

import asyncio
import json
import os
import sqlite3
import sys

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

db = sqlite3.connect(os.environ["DB"], isolation_level=None)
db.execute("CREATE TABLE IF NOT EXISTS effects (tool TEXT NOT NULL, pid INTEGER NOT NULL, arg TEXT)")
BLOCK = os.environ.get("BLOCK") == "1"


def say(**ev):
    sys.stderr.write(json.dumps({**ev, "pid": os.getpid()}) + "\n")
    sys.stderr.flush()


async def work(tool: str, arg: str) -> str:
    db.execute("INSERT INTO effects (tool, pid, arg) VALUES (?, ?, ?)", (tool, os.getpid(), arg))
    if BLOCK:
        say(ev="blocked", tool=tool)
        await asyncio.Event().wait()
    return f"{tool} {arg} (pid {os.getpid()})"


mcp = MCPServer("stdio-desk-python")


@mcp.tool(description="Look a ticket up (read-only).", annotations=ToolAnnotations(readOnlyHint=True))
async def lookup(q: str) -> str:
    return await work("lookup", q)


@mcp.tool(
    description="Create a note (a write; not safe to repeat).",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False),
)
async def create_note(body: str) -> str:
    return await work("create_note", body)


say(ev="ready")
mcp.run()
