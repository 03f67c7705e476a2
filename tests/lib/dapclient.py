"""dapclient - a small Debug Adapter Protocol client for the tests: drives lldb-dap over stdio the
way an IDE (VS Code) does (python3 standard library only).

    dap = DapClient([LLDB_DAP])
    dap.initialize()
    dap.attach({"coreFile": core, "program": exe, "initCommands": [...]})   # or {"pid": N, ...}
    dap.request("threads")["body"]["threads"]
    dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 100})
    dap.request("evaluate", {"expression": "aInt", "frameId": fid, "context": "watch"})
    dap.close()

Every wait has a timeout: a silent adapter is a failure, never a hang. Messages are kept in
`log` for the failure report (dump()).
"""
import json
import queue
import subprocess
import threading
import time


class DapError(Exception):
    pass


class DapClient:
    def __init__(self, argv, env=None, timeout=60):
        self.timeout = timeout
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, start_new_session=True)
        self.seq = 0
        self.log = []            # every message, in order: ("->" | "<-", message)
        self.events = []         # events not yet taken by wait_event
        self.responses = {}      # request_seq -> response
        self.cv = threading.Condition()
        self.stderr = []
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # ---- transport ----

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def _read(self):
        f = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = f.readline()
                if not line:
                    with self.cv:
                        self.closed = True
                        self.cv.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                key, _, value = line.decode("ascii", "replace").partition(":")
                headers[key.strip().lower()] = value.strip()
            body = f.read(int(headers.get("content-length", "0")))
            msg = json.loads(body.decode("utf-8"))
            with self.cv:
                self.log.append(("<-", msg))
                if msg.get("type") == "response":
                    self.responses[msg["request_seq"]] = msg
                else:
                    self.events.append(msg)
                self.cv.notify_all()

    def send(self, command, arguments=None):
        """Sends a request; returns its seq (see wait_response)."""
        with self.cv:
            self.seq += 1
            msg = {"seq": self.seq, "type": "request", "command": command}
            if arguments is not None:
                msg["arguments"] = arguments
            self.log.append(("->", msg))
            seq = self.seq
        data = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()
        return seq

    def _wait(self, ready, what, timeout):
        deadline = time.time() + (timeout or self.timeout)
        with self.cv:
            while True:
                got = ready()
                if got is not None:
                    return got
                left = deadline - time.time()
                if left <= 0:
                    raise DapError(f"timed out waiting for {what}")
                if self.closed:
                    raise DapError(f"lldb-dap exited while waiting for {what}")
                self.cv.wait(left)

    def wait_response(self, seq, timeout=None):
        return self._wait(lambda: self.responses.pop(seq, None), f"the response to request {seq}", timeout)

    def wait_event(self, name, timeout=None):
        def take():
            for i, e in enumerate(self.events):
                if e.get("event") == name:
                    return self.events.pop(i)
            return None
        return self._wait(take, f"event '{name}'", timeout)

    def request(self, command, arguments=None, timeout=None):
        """Sends a request and returns its response; a failed one raises DapError with its message."""
        resp = self.wait_response(self.send(command, arguments), timeout)
        if not resp.get("success"):
            raise DapError(f"{command} failed: {resp.get('message')} {json.dumps(resp.get('body'))}")
        return resp

    # ---- the IDE's sequence ----

    def initialize(self):
        return self.request("initialize", {"clientID": "asyncdac-tests", "adapterID": "lldb-dap", "linesStartAt1": True,
                                           "columnsStartAt1": True, "pathFormat": "path",
                                           "supportsVariableType": True})

    def start(self, command, arguments, timeout=None):
        """attach or launch, then configurationDone once lldb-dap is initialized (lldb-dap answers
        the request after that, as VS Code expects); returns the request's response."""
        seq = self.send(command, arguments)
        self.wait_event("initialized", timeout)
        self.request("configurationDone", timeout=timeout)
        resp = self.wait_response(seq, timeout)
        if not resp.get("success"):
            raise DapError(f"{command} failed: {resp.get('message')} {json.dumps(resp.get('body'))}")
        return resp

    def attach(self, arguments, timeout=None):
        return self.start("attach", arguments, timeout)

    def launch(self, arguments, timeout=None):
        return self.start("launch", arguments, timeout)

    def threads(self):
        return self.request("threads")["body"]["threads"]

    def stack(self, thread_id, levels=1000):
        return self.request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": levels})["body"]["stackFrames"]

    def evaluate(self, expression, frame_id, context="watch"):
        """The evaluate response (success or not: its message is part of what tests check)."""
        return self.wait_response(self.send("evaluate", {"expression": expression, "frameId": frame_id,
                                                         "context": context}))

    def close(self):
        if self.proc.poll() is None:
            try:
                self.wait_response(self.send("disconnect", {"terminateDebuggee": False}), timeout=20)
            except (DapError, OSError):
                pass
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def dump(self, last=30):
        """The last messages and lldb-dap's stderr, for a failure report."""
        lines = [f"{d} {json.dumps(m)[:400]}" for d, m in self.log[-last:]]
        return "\n".join(lines + ["stderr:"] + self.stderr[-20:])
