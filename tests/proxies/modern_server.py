#!/usr/bin/env python3
"""A tiny MCP server built with the official Python SDK (mcp 2.3.0 `MCPServer`), which speaks the
2026-07-28 protocol (no initialize, no session; every result carries `resultType`): an `exec` tool
that always returns the same text, as a CI poll that never finishes."""
from mcp.server.mcpserver import MCPServer

app = MCPServer("poll")


@app.tool()
def exec(command: str) -> str:
    """Pretend to run a shell command."""
    return f"{command}: status=in_progress"


if __name__ == "__main__":
    app.run("stdio")
