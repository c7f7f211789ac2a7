#!/usr/bin/env python3
"""A scripted LLM server for the tests of the LLM clients and the optimizer: no network, no model.

    fake_llm_server.py SCRIPT PORT_FILE LOG_FILE

Listens on 127.0.0.1 at a free port, which it writes to PORT_FILE once it accepts connections, and
answers each POST with the next reply of SCRIPT (JSON: {"replies": [...]}), in the order requests
arrive, speaking the protocol the path names: OpenAI chat completions (.../chat/completions) or
Anthropic Messages (.../v1/messages). A reply is an object:
    "text": str | "text_file": path    the model's reply, wrapped in the protocol's JSON
    "finish": str                      finish_reason / stop_reason (default "stop" / "end_turn")
    "usage": [input, output]           tokens reported (default [1000, 500])
    "status": int                      HTTP status (default 200); with "error": its message
    "headers": {name: value}           extra response headers (e.g. Retry-After)
    "raw": str                         the body as is, instead of the protocol's JSON
    "delay_s": float                   wait before answering (a timeout test)
    "truncate": true                   announce the whole body, send half of it, close
Requests past the script get HTTP 500 "no scripted reply left". Each request is appended to
LOG_FILE as a JSON line {"path", "headers", "body"} (the body parsed when it is JSON).
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, path, log_path):
        with open(path) as f:
            self.replies = json.load(f)["replies"]
        self.next = 0
        self.lock = threading.Lock()
        self.log_path = log_path

    def take(self, record):
        with self.lock:
            with open(self.log_path, "a") as log:
                log.write(json.dumps(record) + "\n")
            if self.next >= len(self.replies):
                return {"status": 500, "error": "no scripted reply left"}
            reply = self.replies[self.next]
            self.next += 1
            return reply


def reply_text(reply):
    if "text_file" in reply:
        with open(reply["text_file"]) as f:
            return f.read()
    return reply.get("text", "")


def protocol_body(anthropic, reply):
    usage = reply.get("usage", [1000, 500])
    text = reply_text(reply)
    if anthropic:
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
                "content": [{"type": "thinking", "thinking": "(not shown)"}, {"type": "text", "text": text}],
                "stop_reason": reply.get("finish", "end_turn"),
                "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": reply.get("finish", "stop")}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": usage[0] + usage[1]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (a timeout test)

    def answer(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        reply = self.server.script.take({"path": self.path, "headers": dict(self.headers), "body": body})
        time.sleep(reply.get("delay_s", 0))
        status = reply.get("status", 200)
        if "raw" in reply:
            data = reply["raw"]
        elif status != 200:
            data = json.dumps({"error": {"type": "fake", "message": reply.get("error", "scripted failure")}})
        else:
            data = json.dumps(protocol_body(self.path.endswith("/v1/messages"), reply))
        data = data.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.get("headers", {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        if reply.get("truncate"):
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)


def main():
    script_path, port_file, log_path = sys.argv[1:4]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.script = Script(script_path, log_path)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
