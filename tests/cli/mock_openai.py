# A local stand-in for the OpenAI Chat Completions API, for tests of the README's
# walkthrough: it answers each request with the next assistant message of a script
# (a JSON list of {"text": ...} or {"tool_calls": [{"name", "args"}]}), streamed as
# SSE when the request asks for it, and prints each request's last message.
# Usage: mock_openai.py PORT SCRIPT.json
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[2]))
served = 0


def message(step):
    if "tool_calls" in step:
        calls = [{"id": "call_%d_%d" % (served, i), "type": "function",
                  "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                 for i, c in enumerate(step["tool_calls"])]
        return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
    return {"role": "assistant", "content": step["text"]}, "stop"


class Api(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global served
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        print("request", served + 1, json.dumps(request["messages"][-1])[:200], flush=True)
        if served >= len(script):
            body = json.dumps({"error": {"message": "the mock's script is used up", "type": "server_error"}}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        msg, finish = message(script[served])
        served += 1
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if request.get("stream"):
            delta = dict(msg)
            if "tool_calls" in delta:
                delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
            chunks = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}]
            body = "".join("data: %s\n\n" % json.dumps(dict(c, id="chatcmpl-1", object="chat.completion.chunk",
                                                            model=request["model"])) for c in chunks)
            body = (body + "data: [DONE]\n\n").encode()
            content_type = "text/event-stream"
        else:
            body = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": request["model"],
                               "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                               "usage": usage}).encode()
            content_type = "application/json"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Api).serve_forever()
