"""A scripted worker for the C++ Worker tests: misbehaves on request, stdlib only."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    rid, cmd = request["id"], request["cmd"]
    if cmd == "garbage":
        print("this is not json", flush=True)
    elif cmd == "wrong_id":
        print(json.dumps({"id": rid + 100, "ok": True, "result": {}}), flush=True)
    elif cmd == "poison":
        print(json.dumps({"id": rid, "ok": False, "restart": True,
                          "error": {"kind": "launch", "message": "kernel 'k': illegal address",
                                    "traceback": ""}}), flush=True)
        sys.exit(0)
    else:
        print(json.dumps({"id": rid, "ok": True, "result": {"cmd": cmd, "argv": sys.argv[1:]}}),
              flush=True)
        if cmd == "shutdown":
            sys.exit(0)
