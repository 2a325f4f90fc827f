#!/usr/bin/env python3
"""Prints LSP messages with Content-Length framing (what editors send): a
bare array (dropped by the filter), initialize, then shutdown and exit."""
import json, sys

def frame(body):
    data = body.encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)

frame("[1, 2, 3]")
frame(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"processId": 1, "rootPath": "mlir",
                             "capabilities": {}, "trace": "off"}}))
frame(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
