#!/usr/bin/env python3
"""A Ratchet remote tool service in Python, with the standard library only.

It speaks the NATS client protocol over a plain socket (CONNECT, SUB, PUB, MSG/HMSG, PING/PONG), answers
NATS service discovery ($SRV.PING / $SRV.INFO / $SRV.STATS, the protocol of NATS micro services) and
serves its tools on Ratchet's tool subjects, describing each on its own subject (Ratchet-Op: describe).
No Ratchet code and no NATS library: the contract is docs/tools.md#remote-tool-services.

    NATS_URL=nats://127.0.0.1:4222 RATCHET_SUBJECT_PREFIX=ratchet python3 tool_service.py

RATCHET_TENANT=acme serves the tools to tenant acme only (<prefix>.tenants.acme.toolsvc.<tool>).
"""
import datetime
import json
import os
import socket
import sys
import threading
import uuid
from urllib.parse import urlparse

PREFIX = os.environ.get("RATCHET_SUBJECT_PREFIX", "ratchet")
TENANT = os.environ.get("RATCHET_TENANT")
SERVICE = "units-tools"
SERVICE_ID = uuid.uuid4().hex
VERSION = "1.0.0"
STARTED = datetime.datetime.now(datetime.timezone.utc).isoformat()
QUEUE = SERVICE


def tool_subject(tool):
    return f"{PREFIX}.tenants.{TENANT}.toolsvc.{tool}" if TENANT else f"{PREFIX}.toolsvc.{tool}"


# --- the tools ------------------------------------------------------------------------------------
FACTORS = {("km", "mi"): 0.621371, ("mi", "km"): 1.609344, ("kg", "lb"): 2.204623, ("lb", "kg"): 0.453592}
NOTES = {}  # (tenant, idempotency key) -> the note stored for it; a real service keeps this in its database


def convert(args, scope):
    factor = FACTORS.get((args["from"], args["to"]))
    if factor is None:
        return {"ok": False, "error": {"code": "units.unsupported", "message": f"cannot convert {args['from']} to {args['to']}", "retryable": False}}
    return {"ok": True, "result": {"value": round(args["value"] * factor, 6), "unit": args["to"]}}


def append_note(args, scope):
    # At-most-once on Ratchet's side; this service also remembers the key, so it can answer reconcile.
    if scope not in NOTES:
        NOTES[scope] = {"noteId": f"N-{len(NOTES) + 1}", "text": args["text"]}
    return {"ok": True, "result": NOTES[scope]}


WORKING = {}  # (tenant, idempotency key) -> [threading.Event, reason]: calls still working, for cancel notices


def slow_count(args, scope):
    # Long work that honours a cancel: it stops as soon as Ratchet says nobody waits for it any more.
    label = args["label"]
    print(f"started {label}", flush=True)
    cancel = WORKING[scope]
    if cancel[0].wait(int(args["seconds"])):
        print(f"cancelled {label}: {cancel[1]}", flush=True)
        return {"ok": False, "error": {"code": "cancelled", "message": cancel[1], "retryable": False}}
    print(f"finished {label}", flush=True)
    return {"ok": True, "result": {"label": label, "counted": int(args["seconds"])}}


def reconcile_note(scope):
    note = NOTES.get(scope)
    return {"ok": True, "result": {"happened": True, "result": note} if note else {"happened": False}}


TOOLS = {
    "units.convert": {
        "describe": {
            "name": "units.convert",
            "description": "Convert a value between km/mi or kg/lb.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "value": {"type": "number", "description": "The value to convert"},
                    "from": {"type": "string", "enum": ["km", "mi", "kg", "lb"]},
                    "to": {"type": "string", "enum": ["km", "mi", "kg", "lb"]},
                },
                "required": ["value", "from", "to"],
                "additionalProperties": False,
            },
            "kind": "pure",
            "timeoutMs": 2000,
        },
        "call": convert,
    },
    "notes.append": {
        "describe": {
            "name": "notes.append",
            "description": "Append a note to the shared notebook.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 500}},
                "required": ["text"],
                "additionalProperties": False,
            },
            "kind": "at-most-once",
            "timeoutMs": 2000,
            "reconcile": True,
        },
        "call": append_note,
        "reconcile": reconcile_note,
    },
    "units.slow_count": {
        "describe": {
            "name": "units.slow_count",
            "description": "Count to `seconds`, one a second. Returns the count.",
            "inputSchema": {
                "type": "object",
                "properties": {"label": {"type": "string", "maxLength": 64}, "seconds": {"type": "string", "pattern": "^[0-9]{1,3}$"}},
                "required": ["label", "seconds"],
                "additionalProperties": False,
            },
            "kind": "pure",
            "timeoutMs": 60000,
        },
        "call": slow_count,
        "long": True,  # runs on a thread of its own and answers from there: cancels are read meanwhile
    },
}


# --- a minimal NATS client ------------------------------------------------------------------------
class Nats:
    def __init__(self, url):
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 4222))
        self.buf = b""
        self.subs = {}
        self.next_sid = 1
        self.lock = threading.Lock()  # long calls answer from their own threads
        info = self.readline()
        if not info.startswith(b"INFO "):
            raise RuntimeError(f"not a NATS server: {info!r}")
        connect = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True,
                   "name": SERVICE, "lang": "python3-stdlib", "version": VERSION, "protocol": 1}
        if u.username:
            connect.update({"user": u.username, "pass": u.password or ""})
        self.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")

    def send(self, data):
        with self.lock:
            self.sock.sendall(data)

    def readline(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def subscribe(self, subject, handler, queue=None):
        sid = str(self.next_sid)
        self.next_sid += 1
        self.subs[sid] = handler
        self.send(f"SUB {subject} {queue + ' ' if queue else ''}{sid}\r\n".encode())

    def publish(self, subject, payload):
        self.send(f"PUB {subject} {len(payload)}\r\n".encode() + payload + b"\r\n")

    def run(self):
        while True:
            line = self.readline()
            if line == b"PING":
                self.send(b"PONG\r\n")
            elif line.startswith(b"MSG ") or line.startswith(b"HMSG "):
                parts = line.decode().split(" ")
                if parts[0] == "MSG":
                    subject, sid = parts[1], parts[2]
                    reply = parts[3] if len(parts) == 5 else None
                    headers, payload = {}, self.read(int(parts[-1]))
                else:
                    subject, sid = parts[1], parts[2]
                    reply = parts[3] if len(parts) == 6 else None
                    raw = self.read(int(parts[-1]))
                    hlen = int(parts[-2])
                    headers, payload = parse_headers(raw[:hlen]), raw[hlen:]
                handler = self.subs.get(sid)
                if handler:
                    # A handler answers now (a body), later from its own thread, or not at all (None).
                    body = handler(subject, headers, payload, reply)
                    if reply and body is not None:
                        self.publish(reply, json.dumps(body).encode())
            elif line.startswith(b"-ERR"):
                print(f"nats: {line.decode()}", file=sys.stderr, flush=True)
            # +OK, PONG and INFO updates need no answer


def parse_headers(block):
    headers = {}
    for line in block.decode(errors="replace").split("\r\n")[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return headers


# --- the Ratchet contract -------------------------------------------------------------------------
def tool_handler(nc, name):
    tool = TOOLS[name]

    def handle(subject, headers, payload, reply):
        op = headers.get("ratchet-op", "")
        if op == "describe":
            return {"ok": True, "result": tool["describe"]}
        key, tenant = headers.get("ratchet-idempotency-key"), headers.get("ratchet-tenant")
        if not key or not tenant:
            return {"ok": False, "error": {"code": "bad_request", "message": "missing Ratchet headers", "retryable": False}}
        scope = (tenant, key)
        if op == "reconcile":
            return tool["reconcile"](scope) if "reconcile" in tool else {"ok": False, "error": {"code": "unsupported", "message": "no reconcile"}}
        try:
            args = json.loads(payload or b"{}")["args"]
        except (ValueError, KeyError):
            return {"ok": False, "error": {"code": "bad_request", "message": "body is not {args, config}", "retryable": False}}
        if not tool.get("long"):
            return tool["call"](args, scope)
        WORKING[scope] = [threading.Event(), ""]

        def work():
            try:
                body = tool["call"](args, scope)
            finally:
                WORKING.pop(scope, None)
            if reply:
                nc.publish(reply, json.dumps(body).encode())

        threading.Thread(target=work, daemon=True).start()
        return None

    return handle


def cancel_handler(subject, headers, payload, reply):
    # A cancel notice ({"reason": ...} with the call's headers): stops the call it names, if it still works.
    key, tenant = headers.get("ratchet-idempotency-key"), headers.get("ratchet-tenant")
    working = WORKING.get((tenant, key))
    if working:
        try:
            working[1] = str(json.loads(payload or b"{}").get("reason", "cancelled"))
        except ValueError:
            working[1] = "cancelled"
        working[0].set()
    return None


def endpoints():
    return [{"name": n.replace(".", "_"), "subject": tool_subject(n), "queue_group": QUEUE, "metadata": None} for n in TOOLS]


def discovery(kind):
    def handle(subject, headers, payload, reply):
        base = {"name": SERVICE, "id": SERVICE_ID, "version": VERSION, "metadata": {}}
        if kind == "PING":
            return {**base, "type": "io.nats.micro.v1.ping_response"}
        if kind == "INFO":
            return {**base, "type": "io.nats.micro.v1.info_response", "description": "Unit conversion and notes (Python, stdlib only)", "endpoints": endpoints()}
        stats = [{**e, "num_requests": 0, "num_errors": 0, "last_error": "", "processing_time": 0, "average_processing_time": 0} for e in endpoints()]
        return {**base, "type": "io.nats.micro.v1.stats_response", "started": STARTED, "endpoints": stats}

    return handle


def main():
    nc = Nats(os.environ.get("NATS_URL", "nats://127.0.0.1:4222"))
    for kind in ("PING", "INFO", "STATS"):
        for subject in (f"$SRV.{kind}", f"$SRV.{kind}.{SERVICE}", f"$SRV.{kind}.{SERVICE}.{SERVICE_ID}"):
            nc.subscribe(subject, discovery(kind))
    for name in TOOLS:
        nc.subscribe(tool_subject(name), tool_handler(nc, name), queue=QUEUE)
        # Every instance hears a cancel (no queue group): the one doing the work stops it.
        nc.subscribe(tool_subject(name) + ".cancel", cancel_handler)
    print(f"serving {', '.join(TOOLS)} on {tool_subject('<tool>')}", flush=True)
    nc.run()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
