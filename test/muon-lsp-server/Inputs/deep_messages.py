#!/usr/bin/env python3
"""Prints LSP messages for muon-lsp-server -lit-test: initialize, a
notification whose params nest DEPTH arrays deep, then a didOpen whose
document has one verifier error (the server must still answer it)."""
import json, sys

depth = int(sys.argv[1])
init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"processId": 1, "rootPath": "mlir", "capabilities": {},
                   "trace": "off"}}
text = ("dist.mesh @m [dp = 4]\n"
        "func.func @f(%a: !dist.tensor<4xf32, @m, [shard<3>]>) {\n"
        "  %0 = dist.to_local %a : !dist.tensor<4xf32, @m, [shard<3>]> -> tensor<1xf32>\n"
        "  return\n}")
open_doc = {"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": "test:///foo.mlir",
                                        "languageId": "mlir", "version": 1,
                                        "text": text}}}
print(json.dumps(init))
print("// -----")
print('{"jsonrpc":"2.0","method":"$/deep","params":' + "[" * depth + "]" * depth + "}")
print("// -----")
print(json.dumps(open_doc))
print("// -----")
print(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
print("// -----")
print(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
