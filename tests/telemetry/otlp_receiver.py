#!/usr/bin/env python3
"""A local OpenTelemetry collector for the tests: receives OTLP/HTTP JSON on POST
/v1/traces and checks each payload against the OTLP JSON mapping on its own terms
(written from the protobuf JSON mapping, sharing no code with reins' exporter):
ids are lower-case hex strings of 32 and 16 digits and not all zero, 64-bit integers
are decimal strings, span kinds and status codes are the enum's integers, every
attribute value has exactly one known type. Valid spans go to OUTDIR/spans.jsonl,
findings to OUTDIR/errors.txt. It also plays an HTTP tool backend: POST /tool/NAME
records the request's traceparent in OUTDIR/tools.jsonl and answers success. And it
plays an OpenAI model (POST /v1/chat/completions, plain or streamed): a user message gets
a call of lookup_order, a tool result a reply, both from model "fake-gpt-2026-11-01";
each request's traceparent goes to OUTDIR/models.jsonl.

  otlp_receiver.py OUTDIR        prints its port on the first line of stdout
"""
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OUT = sys.argv[1]
HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
UINT = re.compile(r"^[0-9]+$")
INT = re.compile(r"^-?[0-9]+$")
VALUE_KINDS = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"}


def check_value(v, where, errors):
    if not isinstance(v, dict) or len(v) != 1 or next(iter(v)) not in VALUE_KINDS:
        errors.append(f"{where}: an AnyValue has exactly one of {sorted(VALUE_KINDS)}: {v!r}")
        return
    kind, x = next(iter(v.items()))
    if kind == "stringValue" and not isinstance(x, str):
        errors.append(f"{where}: stringValue {x!r} is not a string")
    if kind == "boolValue" and not isinstance(x, bool):
        errors.append(f"{where}: boolValue {x!r} is not a bool")
    if kind == "intValue" and not (isinstance(x, str) and INT.match(x)):
        errors.append(f"{where}: intValue {x!r} is not a decimal string (64-bit integers are strings in OTLP JSON)")
    if kind == "doubleValue" and (isinstance(x, bool) or not isinstance(x, (int, float))):
        errors.append(f"{where}: doubleValue {x!r} is not a number")
    if kind == "arrayValue":
        for i, item in enumerate(x.get("values", [])):
            check_value(item, f"{where}[{i}]", errors)


def check_attributes(attrs, where, errors):
    if not isinstance(attrs, list):
        errors.append(f"{where}: attributes must be a list")
        return
    for a in attrs:
        if not isinstance(a, dict) or not isinstance(a.get("key"), str) or "value" not in a:
            errors.append(f"{where}: an attribute is {{key, value}}: {a!r}")
            continue
        check_value(a["value"], f"{where}.{a['key']}", errors)


def check_span(s, errors):
    where = f"span {s.get('name')!r}"
    if not isinstance(s.get("traceId"), str) or not HEX32.match(s["traceId"]) or set(s["traceId"]) == {"0"}:
        errors.append(f"{where}: traceId {s.get('traceId')!r} is not 32 lower-case hex digits, not all zero")
    if not isinstance(s.get("spanId"), str) or not HEX16.match(s["spanId"]) or set(s["spanId"]) == {"0"}:
        errors.append(f"{where}: spanId {s.get('spanId')!r} is not 16 lower-case hex digits, not all zero")
    parent = s.get("parentSpanId", "")
    if parent and not HEX16.match(parent):
        errors.append(f"{where}: parentSpanId {parent!r} is not 16 hex digits")
    if not isinstance(s.get("name"), str) or not s["name"]:
        errors.append(f"{where}: a span has a name")
    if s.get("kind") not in (0, 1, 2, 3, 4, 5):
        errors.append(f"{where}: kind {s.get('kind')!r} is not a SpanKind integer")
    for field in ("startTimeUnixNano", "endTimeUnixNano"):
        if not isinstance(s.get(field), str) or not UINT.match(s[field]):
            errors.append(f"{where}: {field} {s.get(field)!r} is not a decimal string")
    if UINT.match(str(s.get("startTimeUnixNano", ""))) and UINT.match(str(s.get("endTimeUnixNano", ""))):
        if int(s["startTimeUnixNano"]) > int(s["endTimeUnixNano"]):
            errors.append(f"{where}: ends before it starts")
    check_attributes(s.get("attributes", []), where, errors)
    for e in s.get("events", []):
        if not isinstance(e.get("name"), str) or not UINT.match(str(e.get("timeUnixNano", ""))):
            errors.append(f"{where}: event {e!r} has a name and a timeUnixNano decimal string")
        check_attributes(e.get("attributes", []), f"{where} event {e.get('name')}", errors)
    status = s.get("status")
    if status is not None and status.get("code", 0) not in (0, 1, 2):
        errors.append(f"{where}: status code {status!r} is not a StatusCode integer")


def check_request(body):
    errors, spans = [], []
    if not isinstance(body.get("resourceSpans"), list):
        return ["the body has no resourceSpans list"], []
    for rs in body["resourceSpans"]:
        attrs = rs.get("resource", {}).get("attributes", [])
        check_attributes(attrs, "resource", errors)
        service = [a for a in attrs if a.get("key") == "service.name"]
        if not service or "stringValue" not in service[0].get("value", {}):
            errors.append("the resource has no service.name string")
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                check_span(s, errors)
                s["_service"] = service[0]["value"].get("stringValue") if service else None
                spans.append(s)
    return errors, spans


ANSWERED_BY = "fake-gpt-2026-11-01"


def completion(request):
    """The model's answer to `request`: a tool call after the person, a reply after a tool."""
    if request["messages"][-1]["role"] == "tool":
        return {"role": "assistant", "content": "I looked your order up."}, "stop"
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"id":"o_1"}'}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as collectors do: every answer has a Content-Length

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/tool/"):
            with open(os.path.join(OUT, "tools.jsonl"), "a") as f:
                f.write(json.dumps({"tool": self.path[6:], "traceparent": self.headers.get("traceparent")}) + "\n")
            return self.answer(200, {"success": True, "data": {"ok": True}})
        if self.path == "/v1/chat/completions":
            return self.chat(json.loads(raw))
        if self.path != "/v1/traces":
            return self.answer(404, {})
        errors = []
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            errors.append(f"Content-Type is {self.headers.get('Content-Type')!r}, not application/json")
        try:
            more, spans = check_request(json.loads(raw))
            errors += more
        except ValueError as e:
            errors, spans = [f"the body is not JSON: {e}"], []
        with open(os.path.join(OUT, "errors.txt"), "a") as f:
            for e in errors:
                f.write(e + "\n")
        with open(os.path.join(OUT, "spans.jsonl"), "a") as f:
            for s in spans:
                f.write(json.dumps(s) + "\n")
        self.answer(400 if errors else 200, {})


    def chat(self, request):
        with open(os.path.join(OUT, "models.jsonl"), "a") as f:
            f.write(json.dumps({"traceparent": self.headers.get("traceparent")}) + "\n")
        message, finish = completion(request)
        usage = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        if not request.get("stream"):
            return self.answer(200, {"id": "chatcmpl-1", "object": "chat.completion", "model": ANSWERED_BY,
                                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                     "usage": usage})
        delta = dict(message)
        if delta.get("tool_calls"):
            delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
        chunks = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {"choices": [], "usage": usage}]
        data = b"".join(b"data: " + json.dumps(dict(c, id="chatcmpl-1", object="chat.completion.chunk",
                                                    model=ANSWERED_BY)).encode() + b"\n\n" for c in chunks)
        data += b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
