"""ps.sockets: chains awaiting socket I/O (targets/dotnet/sockets: a TCP connection over 127.0.0.1,
no data sent), classified on the awaiting line from the awaited Socket+AwaitableSocketAsyncEventArgs
(_completedOperation, _currentSocket's _localEndPoint and remote end). On a createdump core:
  WaitReceive  client.ReceiveAsync:   "socket receive: local 127.0.0.1:<client_port>, remote 127.0.0.1:<port>"
  WaitStream   NetworkStream.ReadAsync on the accepted socket:
                                      "socket receive: local 127.0.0.1:<port>, remote 127.0.0.1:<client_port>"
(<port> the listener's, <client_port> the client's, from the READY line). Text and --json ("what")
agree; the oracle (ClrMD) reads the client socket's _localEndPoint._port and the awaited objects' types.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

ARGS = "System.Net.Sockets.Socket+AwaitableSocketAsyncEventArgs"


def main():
    tmp = t.tmpdir()
    ready = {}
    core = b.sample_core("sockets", "Debug", tmp, parked=True, fields=ready)
    port, client = int(ready["port"]), int(ready["client_port"])
    try:
        j, text = b.ps_json_and_text(core)
        by_method = {st["frames"][0]["method"].split("(")[0].rsplit(".", 1)[-1]: st for st in j["chains"]}
        t.check_eq(sorted(by_method), ["WaitReceive", "WaitStream"], "ps: the chains, by innermost method")
        want = {
            "WaitReceive": f"socket receive: local 127.0.0.1:{client}, remote 127.0.0.1:{port}",
            "WaitStream": f"socket receive: local 127.0.0.1:{port}, remote 127.0.0.1:{client}",
        }
        objs = b.oracle_objects(core, tmp, addresses=[h(st["awaiting"]["object"]) for st in by_method.values()],
                                statics=["AsyncdacSamples.SocketsApp::s_client._localEndPoint"])
        for method, what in want.items():
            aw = by_method[method]["awaiting"]
            t.check_eq(aw["type"], ARGS, f"{method}: awaited type")
            t.check_eq(b.display(objs["objects"][h(aw["object"])]["type"]), ARGS, f"{method}: awaited type (oracle)")
            t.check_eq(aw.get("what"), what, f"{method}: what it awaits (--json)")
            prefix = f"  awaiting: 0x{h(aw['object']):016x} {ARGS} "
            t.check(any(l.startswith(prefix) and l.endswith(f"({what})") for l in text.splitlines()),
                    f"{method}: awaiting line {prefix}... ({what}) in\n{text}")
        ep = objs["statics"].get("AsyncdacSamples.SocketsApp::s_client._localEndPoint", {})
        t.check_eq(ep.get("fields", {}).get("_port"), client, "the client's local port (oracle)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
