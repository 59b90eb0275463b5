"""Drives `trae-mem mcp` through the official MCP Python SDK, as a client would.

Run by tests/mcp.rs with the virtual environment that scripts/test makes.
Usage: mcp_client.py TRAE_MEM_BIN WORK_DIR (TRAE_MEM_HOME comes from the
environment). Prints one JSON object per step on stdout:
{"step": name, ...}; the Rust test asserts on them.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def outcome(result):
    """What a tools/call returned: the structured content, or the error text."""
    texts = [block.text for block in result.content if block.type == "text"]
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": "\n".join(texts),
    }


async def call(client, step, name, arguments):
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as err:
        emit(step, protocol_error={"code": err.error.code, "message": err.error.message})
        return None
    emit(step, **outcome(result))
    return result.structured_content


def hook_payload(session, cwd, **fields):
    return {"session_id": session, "cwd": cwd, **fields}


async def every_tool(server, work):
    # The default mode probes server/discover first and falls back to the
    # initialize handshake, as newer clients do.
    async with Client(server) as client:
        emit("connected", protocol_version=client.protocol_version, server=client.server_info.name)
        tools = await client.list_tools()
        emit(
            "tools",
            tools=[
                {
                    "name": tool.name,
                    "has_output_schema": tool.output_schema is not None,
                    "description": tool.description,
                }
                for tool in tools.tools
            ],
        )

        # A hooked session, told through trae_mem_hook_event.
        hooked = "python-hooked"
        await call(client, "hook_start", "trae_mem_hook_event",
                   {"event": "SessionStart", "payload": hook_payload(hooked, work, source="startup")})
        await call(client, "hook_prompt", "trae_mem_hook_event",
                   {"event": "UserPromptSubmit",
                    "payload": hook_payload(hooked, work, prompt="Why does the nightly import say database is locked?")})
        await call(client, "hook_tool", "trae_mem_hook_event",
                   {"event": "PostToolUse",
                    "payload": hook_payload(hooked, work, tool_name="Bash",
                                            tool_input={"command": "cargo test import"},
                                            tool_response={"stdout": "test import ... FAILED: database is locked", "stderr": ""})})
        await call(client, "hook_stop", "trae_mem_hook_event",
                   {"event": "Stop",
                    "payload": hook_payload(hooked, work, last_assistant_message="Decision: take the write lock up front with BEGIN IMMEDIATE.")})
        await call(client, "hook_end", "trae_mem_hook_event",
                   {"event": "SessionEnd", "payload": hook_payload(hooked, work, reason="logout")})
        await call(client, "hook_bad_payload", "trae_mem_hook_event",
                   {"event": "UserPromptSubmit", "payload": {"session_id": 5, "prompt": "x"}})

        # A session recorded with the session tools.
        started = await call(client, "start", "trae_mem_start_session",
                             {"project": work, "external_id": "python-conversation", "client": "trae"})
        await call(client, "start_again", "trae_mem_start_session",
                   {"project": work, "external_id": "python-conversation", "client": "trae"})
        session = started["session_id"]
        await call(client, "log_decision", "trae_mem_log",
                   {"session_id": session, "kind": "decision",
                    "content": "Cache the stock query for 30 seconds", "tags": ["cache"]})
        await call(client, "log_private", "trae_mem_log",
                   {"session_id": session, "content": "my salary is 9000", "private": True})
        await call(client, "log_private_tags", "trae_mem_log",
                   {"session_id": session, "content": "<private>the vault code is 4711</private>"})
        await call(client, "log_partly_private", "trae_mem_log",
                   {"session_id": session, "kind": "note",
                    "content": "deploy to <private>staging-42.internal</private> tonight"})
        await call(client, "log_unknown_session", "trae_mem_log",
                   {"session_id": "no-such-session", "content": "lost"})
        await call(client, "end", "trae_mem_end_session", {"session_id": session})

        # Recall, once the vectors the hooks and tools started computing in
        # the background are there (a foreground `trae-mem embed` waits for
        # a running one), as they are for a user a moment later: otherwise
        # what search finds by meaning would depend on how fast that was.
        subprocess.run([sys.argv[1], "embed"], check=True, capture_output=True)
        found = await call(client, "search", "trae_mem_search", {"query": "database locked", "project": work})
        await call(client, "search_private", "trae_mem_search", {"query": "salary"})
        await call(client, "search_vault", "trae_mem_search", {"query": "vault"})
        await call(client, "search_bad_limit", "trae_mem_search", {"query": "x", "limit": 1000})
        await call(client, "search_bad_since", "trae_mem_search", {"query": "x", "since": "the other day"})
        prompt = next(hit["id"] for hit in found["hits"] if hit["kind"] == "user")
        await call(client, "timeline", "trae_mem_timeline", {"id": prompt, "window_minutes": 60})
        await call(client, "timeline_missing", "trae_mem_timeline", {"id": 999999})
        logged = await call(client, "search_decision", "trae_mem_search", {"query": "stock query"})
        decision = logged["hits"][0]["id"]
        await call(client, "timeline_session", "trae_mem_timeline", {"id": decision})
        await call(client, "get", "trae_mem_get_observations", {"ids": [prompt, decision, decision + 1, 999999]})
        await call(client, "inject", "trae_mem_inject", {"project": work, "query": "stock query"})
        await call(client, "inject_small", "trae_mem_inject", {"project": work, "budget_chars": 300})
        await call(client, "inject_elsewhere", "trae_mem_inject", {"project": "/nowhere/at/all"})
        await call(client, "hook_next_start", "trae_mem_hook_event",
                   {"event": "SessionStart", "payload": hook_payload("python-next", work, source="startup")})

        # Calls a model gets wrong.
        await call(client, "unknown_tool", "trae_mem_nonesuch", {})
        await call(client, "bad_arguments", "trae_mem_get_observations", {"ids": "42"})
        await call(client, "unknown_argument", "trae_mem_search", {"qeury": "typo"})


async def handshake_client(server):
    # The brief's plain session: the initialize handshake, then a search,
    # in a new server process that opens the same home.
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            result = await session.call_tool("trae_mem_search", {"query": "BEGIN IMMEDIATE"})
            emit("handshake_client", protocol_version=initialized.protocol_version, **outcome(result))


async def main():
    binary, work = sys.argv[1], sys.argv[2]
    server = StdioServerParameters(
        command=binary,
        args=["mcp"],
        env={"TRAE_MEM_HOME": os.environ["TRAE_MEM_HOME"]},
        cwd=work,
    )
    await every_tool(server, work)
    await handshake_client(server)
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
