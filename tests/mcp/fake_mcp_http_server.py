#!/usr/bin/env python3
"""A scripted MCP server over Streamable HTTP for the client's failure tests.

Usage: fake_mcp_http_server.py PORT

Endpoint /mcp. initialize answers with plain JSON and an Mcp-Session-Id; notifications
get 202. Tools:
  echo      plain JSON answer {"content":[{"type":"text","text":<message>}]}
  stream    an SSE answer: a progress notification (when asked), then the result
  forget    answers, then forgets every session (the next request gets 404)
  boom      HTTP 500
  mute      an SSE stream that ends without the result
GET /stats reports what the server saw (initializes, deletes, requests per session,
the protocol version headers), for the test to check.
"""
import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
sessions = set()
stats = {"initializes": 0, "deletes": 0, "not_found": 0, "versions": [], "calls": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_empty(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_sse(self, messages):
        body = "".join("event: message\ndata: %s\n\n" % json.dumps(m) for m in messages).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                self.send_json(200, stats)
            return
        self.send_empty(405)

    def do_DELETE(self):
        sid = self.headers.get("Mcp-Session-Id")
        with lock:
            stats["deletes"] += 1
            sessions.discard(sid)
        self.send_empty(200)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(length))
        accept = self.headers.get("Accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            self.send_json(406, {"error": "Accept must list application/json and text/event-stream"})
            return
        sid = self.headers.get("Mcp-Session-Id")
        method = msg.get("method")
        if method == "initialize":
            new_sid = str(uuid.uuid4())
            with lock:
                sessions.add(new_sid)
                stats["initializes"] += 1
            self.send_json(200, {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-http", "version": "1"}}}, {"Mcp-Session-Id": new_sid})
            return
        with lock:
            known = sid in sessions
            if not known:
                stats["not_found"] += 1
            stats["versions"].append(self.headers.get("MCP-Protocol-Version"))
        if not known:
            self.send_json(404, {"jsonrpc": "2.0", "error": {"code": -32001, "message": "Session not found"}})
            return
        if "id" not in msg:  # a notification or a response
            self.send_empty(202)
            return
        if method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "stream", "forget", "boom", "mute")]
            self.send_json(200, {"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}})
            return
        if method != "tools/call":
            self.send_json(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no " + method}})
            return
        params = msg.get("params", {})
        name = params.get("name")
        args = params.get("arguments", {})
        with lock:
            stats["calls"].append(name)
        result = {"content": [{"type": "text", "text": json.dumps({"echo": args.get("message", "")})}]}
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if name == "echo":
            self.send_json(200, reply)
        elif name == "stream":
            out = []
            token = params.get("_meta", {}).get("progressToken")
            if token is not None:
                out.append({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": 1, "total": 1}})
            self.send_sse(out + [reply])
        elif name == "forget":
            with lock:
                sessions.clear()
            self.send_json(200, reply)
        elif name == "boom":
            self.send_json(500, {"error": "the fake server broke on purpose"})
        elif name == "mute":
            self.send_sse([])
        else:
            self.send_json(200, {"jsonrpc": "2.0", "id": msg["id"],
                                 "result": {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
