"""ps.pipes: chains awaiting pipe reads (targets/dotnet/pipes), classified on the awaiting line. On a
createdump core:
  WaitPipeline   PipeReader.ReadAsync on a System.IO.Pipelines Pipe holding 5 examined, unconsumed bytes:
                 awaits Pipe+DefaultPipeReader, "pipe read (System.IO.Pipelines): 5 bytes unread"
                 (_pipe's _readHead/_readHeadIndex .. _readTail/_readTailIndex)
  WaitAnonymous  AnonymousPipeServerStream.ReadAsync: on Linux PipeStream reads through a Socket made over
                 the pipe's descriptor, so it awaits Socket+AwaitableSocketAsyncEventArgs, whose socket has
                 AddressFamily and SocketType Unknown: "pipe receive: fd <anon_fd>" (READY's anon_fd)
Text and --json ("what") agree; the oracle (ClrMD) gives the awaited objects' types and the Pipe's
_readHeadIndex and _readTailIndex.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

READER = "System.IO.Pipelines.Pipe+DefaultPipeReader"
ARGS = "System.Net.Sockets.Socket+AwaitableSocketAsyncEventArgs"


def main():
    tmp = t.tmpdir()
    ready = {}
    core = b.sample_core("pipes", "Debug", tmp, parked=True, fields=ready)
    unread, fd = int(ready["unread"]), int(ready["anon_fd"])
    try:
        j, text = b.ps_json_and_text(core)
        by_method = {}
        for st in j["chains"]:
            names = [f["method"].split("(")[0].rsplit(".", 1)[-1] for f in st["frames"]]
            by_method[names[-1]] = st
        t.check_eq(sorted(by_method), ["WaitAnonymous", "WaitPipeline"], "ps: the chains, by outermost method")
        want = {
            "WaitPipeline": (READER, f"pipe read (System.IO.Pipelines): {unread} bytes unread"),
            "WaitAnonymous": (ARGS, f"pipe receive: fd {fd}"),
        }
        t.check_eq(want["WaitPipeline"][1], "pipe read (System.IO.Pipelines): 5 bytes unread", "the sample's unread bytes")
        objs = b.oracle_objects(core, tmp, addresses=[h(st["awaiting"]["object"]) for st in by_method.values()],
                                statics=["AsyncdacSamples.PipesApp::s_pipe"])
        for method, (typ, what) in want.items():
            aw = by_method[method]["awaiting"]
            t.check_eq(aw["type"], typ, f"{method}: awaited type")
            t.check_eq(b.display(objs["objects"][h(aw["object"])]["type"]), typ, f"{method}: awaited type (oracle)")
            t.check_eq(aw.get("what"), what, f"{method}: what it awaits (--json)")
            prefix = f"  awaiting: 0x{h(aw['object']):016x} {typ} "
            t.check(any(l.startswith(prefix) and l.endswith(f"({what})") for l in text.splitlines()),
                    f"{method}: awaiting line {prefix}... ({what}) in\n{text}")
        pipe = objs["statics"].get("AsyncdacSamples.PipesApp::s_pipe", {}).get("fields", {})
        t.check_eq((pipe.get("_readHeadIndex"), pipe.get("_readTailIndex")), (0, unread),
                   "the Pipe's read head and tail indexes (oracle)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
