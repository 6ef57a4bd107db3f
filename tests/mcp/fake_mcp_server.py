#!/usr/bin/env python3
"""A scripted MCP server for the client's failure-case tests (tests/mcp/mcp_client_test.cc).

Line-delimited JSON-RPC on stdin/stdout, like a real stdio MCP server. Options:
  --version V        answer initialize with protocol version V (default: echo the client's)
  --list-changed     send notifications/tools/list_changed after initialized
  --die-on-start     exit before answering anything
  --describe-echo T  list the tool echo with the description T (a server that changed
                     a tool after it was pinned, tests/mcp/pin_test.sh)
Environment: FAKE_LOG=PATH appends every line received to PATH (to see the order on
the wire when a test fails).
Tools (tools/call name):
  echo {..}          structuredContent = the arguments
  slow {ms}          answers after ms milliseconds (other requests are answered meanwhile)
  die                exits without answering
  garbage            writes a malformed line, then answers
  progress           two notifications/progress, then the result
  ask                sends elicitation/create (with id 1, the id the client used for
                     initialize) and returns the client's answer
  ping_client        sends ping and roots/list to the client, returns the answers
  fail               result with isError true
  rpc_error          a JSON-RPC error response
  cancelled          returns the request ids the client cancelled so far
  stderr             writes a line to stderr, then answers
  grow               adds a tool `extra` (echoes like echo), sends
                     notifications/tools/list_changed, then answers
"""
import json
import os
import sys
import threading
import time

lock = threading.Lock()
version = None
list_changed = "--list-changed" in sys.argv
if "--version" in sys.argv:
    version = sys.argv[sys.argv.index("--version") + 1]
if "--die-on-start" in sys.argv:
    sys.exit(3)

cancelled = []
waiting = {}  # our request id -> (event, slot)
next_server_id = [1]


def send(msg):
    with lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def result(rid, value):
    send({"jsonrpc": "2.0", "id": rid, "result": value})


def ask_client(method, params):
    with lock:
        sid = next_server_id[0]
        next_server_id[0] += 1
        event = threading.Event()
        waiting[sid] = [event, None]
    send({"jsonrpc": "2.0", "id": sid, "method": method, "params": params})
    event.wait(5)
    return waiting.pop(sid)[1]


TOOLS = [{"name": n, "description": "scripted " + n, "inputSchema": {"type": "object"}} for n in
         ["echo", "slow", "die", "garbage", "progress", "ask", "ping_client", "fail", "rpc_error", "cancelled",
          "stderr", "grow"]]
if "--describe-echo" in sys.argv:
    TOOLS[0]["description"] = sys.argv[sys.argv.index("--describe-echo") + 1]


def call(rid, name, args, meta):
    if name == "echo":
        result(rid, {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args})
    elif name == "slow":
        time.sleep(args.get("ms", 100) / 1000.0)
        result(rid, {"content": [{"type": "text", "text": "slept"}]})
    elif name == "die":
        sys.stdout.flush()
        import os
        os._exit(7)
    elif name == "garbage":
        with lock:
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        result(rid, {"content": [{"type": "text", "text": "{\"after\": \"garbage\"}"}]})
    elif name == "progress":
        token = meta.get("progressToken")
        for i in (1, 2):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i, "total": 2}})
        result(rid, {"content": [{"type": "text", "text": "done"}]})
    elif name == "ask":
        answer = ask_client("elicitation/create", {"message": "Which color?", "requestedSchema": {
            "type": "object", "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
            "required": ["color"]}})
        result(rid, {"content": [{"type": "text", "text": json.dumps(answer)}], "structuredContent": answer})
    elif name == "ping_client":
        pong = ask_client("ping", {})
        roots = ask_client("roots/list", {})
        result(rid, {"content": [], "structuredContent": {"ping": pong, "roots": roots}})
    elif name == "fail":
        result(rid, {"content": [{"type": "text", "text": "it broke"}], "isError": True})
    elif name == "rpc_error":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "bad params"}})
    elif name == "cancelled":
        result(rid, {"content": [], "structuredContent": {"ids": list(cancelled)}})
    elif name == "grow":
        with lock:
            if not any(t["name"] == "extra" for t in TOOLS):
                TOOLS.append({"name": "extra", "description": "appeared after grow",
                              "inputSchema": {"type": "object", "properties": {"note": {"type": "string"}}}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result(rid, {"content": [{"type": "text", "text": "{\"grown\": true}"}]})
    elif name == "extra":
        result(rid, {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args})
    elif name == "stderr":
        sys.stderr.write("a note on stderr\n")
        sys.stderr.flush()
        result(rid, {"content": [{"type": "text", "text": "{}"}]})


for line in sys.stdin:
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write(line)
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method = msg.get("method")
    rid = msg.get("id")
    if method is None:  # a response to one of our requests
        slot = waiting.get(rid)
        if slot is not None:
            slot[1] = msg.get("result", msg.get("error"))
            slot[0].set()
        continue
    params = msg.get("params") or {}
    if method == "initialize":
        result(rid, {"protocolVersion": version or params.get("protocolVersion"),
                     "capabilities": {"tools": {"listChanged": True}},
                     "serverInfo": {"name": "fake", "version": "1"}})
    elif method == "notifications/initialized":
        if list_changed:
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    elif method == "notifications/cancelled":
        cancelled.append(params.get("requestId"))
    elif method == "tools/list":
        if params.get("cursor") == "page2":
            result(rid, {"tools": TOOLS[6:]})
        else:
            result(rid, {"tools": TOOLS[:6], "nextCursor": "page2"})
    elif method == "tools/call":
        threading.Thread(target=call, args=(rid, params.get("name"), params.get("arguments") or {},
                                           params.get("_meta") or {}), daemon=True).start()
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
