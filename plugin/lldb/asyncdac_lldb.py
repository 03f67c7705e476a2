"""asyncdac_lldb - the Python side of the asyncdac LLDB 22 plugin: LLDB's Python extension points
wired to the plugin's C library. Loaded by the plugin's PluginInitialize (`plugin load` is all it
takes); not meant to be imported by hand.

  AsyncFrameProvider     a scripted frame provider, registered on every target (one subclass per
                         target): each thread's frames as asyncdac shows them (managed frames
                         named, the async frames of the chains it runs spliced in after its
                         dispatch loop's frame), a pending chain's thread its chain's frames
  AsyncFrame             one such frame made by asyncdac (LLDB: a synthetic frame); `frame
                         variable NAME`, `v`, `p` and DAP evaluate on it ask asyncdac for the value
  OperatingSystemPlugIn  the OS plugin LLDB creates for every process (the plugin sets
                         target.process.python-os-plugin-path): registers the frame provider on
                         the process's target when LLDB first reads its threads, before any frame
                         of that stop is built; at each stop, has C show LLDB the native modules
                         of a process in a container; adds one thread per pending chain after
                         `async threads enable`
  AsyncCommand           `async <command>` for each command of the shared table, and `bt`: LLDB
                         parsed commands, the only kind LLDB 22 asks for completions (SB plugin
                         commands and raw Python commands have no hook); what completes a word
                         comes from C (adac_command_complete), running one forwards its words
                         unchanged to the plugin's own command under `_async`

This file is an adapter: what a frame is called, which frames there are and what a value is all
come from C (asyncdac_lldb_call, JSON in and out); nothing here knows the .NET runtime.

LLDB 22.1.8 constraints that shape it (measured, see plugin/lldb/README.md):
  * a provider runs while LLDB holds the thread's frame list; an SB call that needs the target's
    API mutex, made while another thread holds that mutex and waits for the same frame list,
    deadlocks (the event thread printing a stop vs. a command): every SB call made while building
    frames is done under SBTarget.GetAPIMutex().try_lock(), and without the lock the thread gets
    LLDB's own frames for this stop (they are not made again: dropping a thread's frames means
    removing the provider, which LLDB's event thread races, and LLDB crashed). A debugger in
    asynchronous mode (lldb-dap, the interactive command line) holds the lock only briefly (a
    step's request returns once the process runs): there the lock is waited for, a while (_take);
  * SB calls on a provider's input frames are safe only in the provider's first call: everything
    is read then, later calls only look up what was computed; and when reading them runs another
    provider for the same thread (LLDB wraps threads once an OS plugin is loaded for a process it
    already has), they are already asyncdac's frames and pass through untouched;
  * a synthetic frame's register context crashes LLDB: frames give none;
  * frames LLDB did not unwind have no CFA: LLDB tells them apart by pc alone (the C side keeps a
    thread's pcs distinct).
"""
import ctypes
import inspect
import json
import os
import threading
import time

import lldb
from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider
from lldb.plugins.scripted_process import ScriptedFrame
from lldb.plugins.parsed_cmd import ParsedCommand


class _State(object):
    """The module's state. LLDB imports this file again whenever the OS plugin setting is set (and
    `command script import` reloads it): the state must survive that, so it is made only once."""

    def __init__(self):
        self.lib = None             # the plugin (ctypes.CDLL): asyncdac_lldb_call / asyncdac_lldb_free
        self.lock = threading.Lock()
        self.mutexes = {}           # (debugger id, target id) -> SBMutex: the target's API mutex
        self.chains = {}            # (debugger id, target id) -> (stop id, {tid: (table, frames)}, threads)
        self.providers = set()      # (debugger id, target id) with a provider class (see _provider_class)
        self.runtimes = {}          # (debugger id, target id) -> (stop id, whether C found a .NET runtime
                                    # at the last stop it was asked at, the target's number of modules then)
        self.targets = {}           # (debugger id, target id) -> SBTarget (its OS plugin's)


try:
    _state  # noqa: F821 (kept across imports)
except NameError:
    _state = _State()

# Per host thread: how many providers started computing (to notice one running inside another).
_nesting = threading.local()

_DEBUG = bool(os.environ.get("ASYNCDAC_DEBUG"))


def _trace(*what):
    """A line on stderr under ASYNCDAC_DEBUG=1, for diagnosing the adapter itself."""
    if _DEBUG:
        import sys
        print("asyncdac_lldb: [%s]" % _thread_name(), *what, file=sys.stderr, flush=True)


# ---- the C library ----------------------------------------------------------------------------

def _call(request):
    """One request to the C side: a dict in, a dict out ({"error": ...} when it failed). The caller
    holds the target's API lock (see _locked)."""
    lib = _state.lib
    if lib is None:
        return {"error": "the asyncdac plugin library is not loaded"}
    out = lib.asyncdac_lldb_call(json.dumps(request).encode())
    if not out:
        return {"error": "out of memory"}
    try:
        return json.loads(ctypes.string_at(out).decode("utf-8", "replace"))
    finally:
        lib.asyncdac_lldb_free(out)


def start(debugger, library):
    """Called once by PluginInitialize: loads the library and hooks every target and process."""
    if _state.lib is None:
        lib = ctypes.CDLL(library)  # already loaded by LLDB: the same copy, the same state
        lib.asyncdac_lldb_call.restype = ctypes.c_void_p
        lib.asyncdac_lldb_call.argtypes = [ctypes.c_char_p]
        lib.asyncdac_lldb_free.restype = None
        lib.asyncdac_lldb_free.argtypes = [ctypes.c_void_p]
        _state.lib = lib
    for i in range(debugger.GetNumTargets()):
        register(debugger.GetTargetAtIndex(i))


# ---- commands: `async <command>` and `bt`, with completion ----------------------------------

class AsyncCommand(ParsedCommand):
    """One command of the plugin, as an LLDB parsed command without options of its own: LLDB hands
    it the words as typed (quotes removed), in order, and asks it what completes a word. INFO is
    the command's entry from C ({"name", "summary", "syntax", "help_long"}), IMPL the plugin
    command that runs it (`_async ps`), COMPLETE the table entry whose options complete it."""

    INFO = None
    IMPL = None

    def setup_command_definition(self):
        parser = self.get_parser()
        parser.add_argument_set([parser.make_argument_element(lldb.eArgRawInput, "optional")])

    def get_short_help(self):
        return self.INFO["summary"]

    def get_long_help(self):
        # LLDB 22 writes the syntax line of a parsed command itself ("ps [<raw-input>]": one
        # optional argument, LLDB does not count the words); the usage naming the options follows.
        return "\nUsage: %s\n%s" % (self.INFO["usage"], self.INFO["help_long"])

    def get_flags(self):
        return 0

    def __call__(self, debugger, args, exe_ctx, result):
        words = [args.GetItemAtIndex(i).GetStringValue(1 << 20) for i in range(args.GetSize())]
        line = " ".join([self.IMPL] + [_quoted(w) for w in words])
        debugger.GetCommandInterpreter().HandleCommand(line, exe_ctx, result, False)

    def handle_argument_completion(self, args, arg_pos, cursor_pos):
        words = list(args[:arg_pos]) + [args[arg_pos][:cursor_pos] if arg_pos < len(args) else ""]
        name, words = self.complete_words(words)
        if name is None:
            return False
        reply = _call({"op": "complete", "command": name, "words": words})
        values = reply.get("values") or []
        if not values:
            return True  # handled: nothing completes it
        if len(values) == 1:
            return {"completion": values[0], "mode": "complete"}
        return {"values": values, "descriptions": reply.get("descriptions") or [""] * len(values)}

    def complete_words(self, words):
        """(the table command whose options complete words, the words it sees)."""
        return self.INFO["name"], words


class BtCommand(AsyncCommand):
    """`bt`: `bt async ...` is `async bt ...`; other forms are LLDB's own (the plugin's `bt`
    forwards them to `_regexp-bt`), which complete nothing but `all` and `async`."""

    def complete_words(self, words):
        if words[0] == "async":
            return "bt", words[1:]
        return None, words

    def handle_argument_completion(self, args, arg_pos, cursor_pos):
        if arg_pos == 0:
            word = args[0][:cursor_pos] if args else ""
            values = [v for v in ("all", "async") if v.startswith(word)]
            if len(values) == 1:
                return {"completion": values[0], "mode": "complete"}
            return {"values": values} if values else True
        return AsyncCommand.handle_argument_completion(self, args, arg_pos, cursor_pos)


def _quoted(word):
    """word as one argument of an LLDB command line."""
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def add_commands(debugger):
    """Adds `async <command>` for every command of the shared table and `bt`, each running the
    plugin's own command of the same name under `_async` (PluginInitialize made them). Raises
    when LLDB refuses one (the plugin then adds its own commands as `async <command>`)."""
    reply = _call({"op": "commands"})
    if "error" in reply:
        raise RuntimeError(reply["error"])
    interpreter = debugger.GetCommandInterpreter()
    commands = [(dict(c, usage=("async %s %s" % (c["name"], c["syntax"])).strip()), "async " + c["name"],
                 "_async " + c["name"], AsyncCommand) for c in reply["commands"]]
    bt = next(c for c in reply["commands"] if c["name"] == "bt")
    commands.append((dict(bt, summary=reply["bt"]["summary"], usage=reply["bt"]["syntax"]), "bt", "_async _bt",
                     BtCommand))
    commands.append((dict(name="threads", summary=reply["threads"]["summary"], usage=reply["threads"]["syntax"],
                          help_long=""), "async threads", "_async threads", AsyncCommand))
    for info, path, impl, base in commands:
        cls = "AsyncCommand_" + path.replace(" ", "_")
        globals()[cls] = type(cls, (base,), {"INFO": info, "IMPL": impl})
        result = lldb.SBCommandReturnObject()
        interpreter.HandleCommand("command script add -o -p -c %s.%s %s" % (__name__, cls, path), result, False)
        if not result.Succeeded():
            raise RuntimeError("%s: %s" % (path, (result.GetError() or "").strip()))


def _key(target):
    return (target.GetDebugger().GetID(), target.GetGloballyUniqueID())


def _provider_class(key):
    """The frame provider class of one target: AsyncFrameProvider with the target's key, so that a
    provider knows its target without reading arguments or making SB calls (LLDB makes one provider
    per thread and stop: 10,000 chain threads, 10,000 providers)."""
    name = "AsyncFrameProvider_%d_%d" % key
    if name not in globals():
        # LLDB 22.1.8 wants the abstract methods in the class's own dictionary, not inherited.
        own = {m: AsyncFrameProvider.__dict__[m] for m in ("get_description", "get_frame_at_index")}
        own["applies_to_thread"] = staticmethod(lambda thread: _applies(key, thread))
        globals()[name] = type(name, (AsyncFrameProvider,), dict(own, KEY=key))
        with _state.lock:
            _state.providers.add(key)
    return __name__ + "." + name


def _applies(key, thread):
    """Whether the provider applies to the threads of key's process at this stop (LLDB asks before
    making each provider): not without a .NET runtime. LLDB then builds the frames it needs itself:
    a provider that passes LLDB's frames through has them all unwound at every stop, and a step in
    a C program 300 calls deep took ten times as long. What C found at the last stop it was asked
    at (the OS plugin asks at each stop it can look at), while the target has as many modules as
    then: a runtime comes with several; nothing can ask while a command holds the target, as
    during a step; the module count needs no lock. Else asked here, under the API lock if it is
    free.
    Nor while another thread holds the API lock (a step's stops, built while its command holds
    the target): the provider could make no SB call and would pass LLDB's frames through, which
    costs the same unwinding of every frame; a stepped instruction in a .NET process 22 frames deep
    took 6 to 8 ms instead of 3 to 5. The stop the step ends at still shows the provider's frames
    once the command is over (`bt` after `thread step-inst-over`: test lldb.frames.break.launch)."""
    with _state.lock:
        known, target = _state.runtimes.get(key), _state.targets.get(key)
    if known is not None and not known[1] and target is not None and target.GetNumModules() == known[2]:
        return False
    mutex = _mutex(key)
    if mutex is None:
        return True
    if not _take(mutex, key):
        _trace("thread", thread.GetThreadID(), "at a stop built while the target is held: LLDB's frames")
        return False
    try:
        return True if known is not None and known[1] else _runtime_here(key, thread.GetProcess())
    finally:
        mutex.unlock()


def register(target):
    """Registers the frame provider on target; registered already, LLDB keeps it and gives the same
    id. Returns the id, 0 when LLDB refused."""
    if not target.IsValid():
        return 0
    key = _key(target)
    with _state.lock:
        _state.mutexes[key] = target.GetAPIMutex()
    error = lldb.SBError()
    pid = target.RegisterScriptedFrameProvider(_provider_class(key), lldb.SBStructuredData(), error)
    return pid if error.Success() else 0


# How long LLDB's private state thread (intern-state: it builds a step's stops) waits for the target's
# API lock, in a debugger in asynchronous mode, before building a stop's frames without asyncdac (s).
# Who holds it then is mostly a request that returns at once: lldb-dap's `next` resuming the process
# (without waiting, lldb-dap's stack trace after three steps had LLDB's frames in 5 runs of 80 on a
# loaded machine; waiting, in none). Else one that waits for this very thread: the wait ends that,
# the step that much longer (waiting up to 100 ms, 3 steps of 120 took over 100 ms; up to 20 ms,
# none over 35 ms). Other threads do not wait: there the holder was mostly waiting for them (the
# event thread vs. a command), and a later stop took 4 to 7 ms more (`scripts/bench lldb`).
# `scripts/bench steps` measures the wait against ASYNCDAC_ASYNC_LOCK_WAIT_MS=0 (0 to 1000, default 20).
def _lock_wait():
    try:
        ms = int(os.environ.get("ASYNCDAC_ASYNC_LOCK_WAIT_MS", "20"))
    except ValueError:
        ms = 20
    return min(max(ms, 0), 1000) / 1000.0


_ASYNC_LOCK_WAIT = _lock_wait()


def _thread_name():
    """LLDB's name of the calling thread (intern-state, dbg.evt-handler, ...)."""
    try:
        with open("/proc/self/task/%d/comm" % threading.get_native_id()) as f:
            return f.read().strip()
    except OSError:
        return "?"


def _take(mutex, key):
    """Takes the target's API lock if it is free; on LLDB's private state thread, in a debugger in
    asynchronous mode, waits for it up to _ASYNC_LOCK_WAIT (in synchronous mode a command holds it
    for as long as the process runs: a step's stops). False without it."""
    if mutex.try_lock():
        return True
    if _ASYNC_LOCK_WAIT <= 0 or _thread_name() != "intern-state":
        return False
    debugger = lldb.SBDebugger.FindDebuggerWithID(key[0])
    if not debugger.IsValid() or not debugger.GetAsync():
        return False
    deadline = time.monotonic() + _ASYNC_LOCK_WAIT
    while time.monotonic() < deadline:
        time.sleep(0.0005)  # without the GIL: the lock's holder may need it
        if mutex.try_lock():
            return True
    _trace("waited %d ms for the target's lock in vain" % (_ASYNC_LOCK_WAIT * 1000))
    return False


def _mutex(key):
    with _state.lock:
        return _state.mutexes.get(key)


def _locked(key, request):
    """_call under the target's API lock, taken only if free (see the module's notes): None when
    another thread holds it."""
    mutex = _mutex(key)
    if mutex is None or not _take(mutex, key):
        return None
    try:
        return _call(request)
    finally:
        mutex.unlock()


# ---- frames -----------------------------------------------------------------------------------

class AsyncFrame(ScriptedFrame):
    """A frame asyncdac made: a managed frame LLDB cannot name, or an async frame (a suspended
    method of a chain). Everything comes from the C side's entry; no SB call is made here except
    to build a variable's value."""

    def __init__(self, index, entry, key):
        # Not ScriptedFrame.__init__: it looks the thread up by index with a thread id (LLDB 22.1.8).
        self.index = index
        self.entry = entry
        self.key = key

    def get_id(self):
        return self.index

    def get_pc(self):
        # No pc (a note, such as the thread counting the chains left out): LLDB's invalid address,
        # for which it shows no address and disassembles nothing.
        pc = self.entry.get("pc")
        return lldb.LLDB_INVALID_ADDRESS if pc is None else pc

    def get_function_name(self):
        return self.entry.get("function")

    def get_display_function_name(self):
        return self.entry.get("display") or self.entry.get("function")

    def is_artificial(self):
        return bool(self.entry.get("artificial"))

    def is_hidden(self):
        return False

    def get_symbol_context(self):
        return None

    def get_register_info(self):
        return None  # a register context for a synthetic frame crashes LLDB 22.1.8

    def get_register_context(self):
        return None

    def get_variables(self, *filters):
        # Empty, not None: LLDB then answers `frame variable NAME` through
        # get_value_for_variable_expression (22.1.8 lists no values without a backing variable).
        return lldb.SBValueList()

    def get_value_for_variable_expression(self, expr, options=0, error=None):
        frame = self.entry.get("frame")
        if frame is None:
            return _fail(error, "asyncdac has no variables for this frame")
        did, gid = self.key
        reply = _locked(self.key, {"op": "value", "debugger": did, "target": gid, "frame": frame, "path": expr})
        if reply is None:
            return _fail(error, "asyncdac: the target is busy (another thread holds its lock)")
        if "error" in reply:
            return _fail(error, reply["error"])
        target = lldb.SBDebugger.FindDebuggerWithID(did).FindTargetByGloballyUniqueID(gid)
        return _make_value(target, reply, error)


def _fail(error, message):
    if error is not None:
        error.SetErrorString(message)
    return None


def _typed_value(target, reply):
    """The value from target memory with the type the C side named in the loaded symbol file
    (structs and objects then expand with their fields; an array: its elements of that type), or
    None when that module or type is not found. LLDB asks for a variable from a command or an SB
    call (lldb-dap's evaluate) that holds the target's API lock, not while it builds frames: these
    SB calls need no try_lock (see the module's notes)."""
    if "symbol_type" not in reply or "module" not in reply or not target.IsValid():
        return None
    module = target.FindModule(lldb.SBFileSpec(reply["module"], False))
    ty = module.FindFirstType(reply["symbol_type"]) if module.IsValid() else None
    if ty is None or not ty.IsValid():
        return None
    if "elements" in reply:
        ty = ty.GetArrayType(reply["elements"])
    value = target.CreateValueFromAddress(reply["name"], lldb.SBAddress(reply["slot"], target), ty)
    return value if value.IsValid() else None


def _make_value(target, reply, error):
    """An SBValue for a value the C side described: with its type from the loaded symbol file, else
    a basic type of LLDB and its bytes, or an array of one (text). LLDB's SB API can create no other
    types itself."""
    value = _typed_value(target, reply)
    if value is not None:
        return value
    basic = getattr(lldb, "eBasicType" + reply["basic"], None)
    if basic is None or not target.IsValid():
        return _fail(error, "cannot show a value of kind %s" % reply.get("basic"))
    ty = target.GetBasicType(basic)
    if "count" in reply:
        ty = ty.GetArrayType(reply["count"])
    if "address" in reply:
        # In target memory: LLDB reads it there (an expression's copy of it stays right).
        value = target.CreateValueFromAddress(reply["name"], lldb.SBAddress(reply["address"], target), ty)
        if value.IsValid():
            return value
    data = lldb.SBData()
    e = lldb.SBError()
    # WithOwnership: SetData would keep a pointer into the Python bytes object, soon freed.
    data.SetDataWithOwnership(e, bytes.fromhex(reply["bytes"]), target.GetByteOrder(), target.GetAddressByteSize())
    if e.Fail():
        return _fail(error, e.GetCString())
    value = target.CreateValueFromData(reply["name"], data, ty)
    if not value.IsValid():
        return _fail(error, "LLDB could not make a value of type %s" % ty.GetName())
    return value


class _ChainFrames(object):
    """A pending chain's frame entries, made when LLDB asks for them (thread list asks for the first
    of 10,000 chains)."""

    def __init__(self, table, frames):
        self.table = table
        self.frames = frames    # [[table index, continuation, pc]...]

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, i):
        t, cont, pc = self.frames[i]
        return dict(self.table[t], frame=cont, pc=pc)


class AsyncFrameProvider(ScriptedFrameProvider):
    """Every thread's frames as asyncdac shows them, computed in the provider's first call. LLDB
    instantiates a subclass made per target (_provider_class), which sets KEY."""

    KEY = None
    # LLDB reads the class's signature (inspect.signature) to call it, for each of its instances:
    # given, it costs nothing (else 0.1 ms a thread, a second for 10,000 chain threads).
    __signature__ = inspect.Signature([inspect.Parameter("input_frames", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                       inspect.Parameter("args", inspect.Parameter.POSITIONAL_OR_KEYWORD)])

    def __init__(self, input_frames, args):
        # No SB call here (see the module's notes); not ScriptedFrameProvider.__init__, which makes some.
        self.input_frames = input_frames
        self.key = self.KEY
        self.frames = None     # entries from the C side, or None: LLDB's own frames

    @staticmethod
    def get_description():
        return "asyncdac: .NET managed frames named and async frames spliced in"

    def get_frame_at_index(self, index):
        if self.frames is None:
            self.frames = self._compute()
        if self.frames is False:
            # The input frames unchanged, as far as LLDB's unwinder goes (an index past its last
            # frame ends the list; counting them now could cut it short while LLDB is attaching).
            return index
        if index >= len(self.frames):
            return None
        entry = self.frames[index]
        if "input" in entry:
            return entry["input"]
        return AsyncFrame(index, entry, self.key)

    def _compute(self):
        mutex = _mutex(self.key) if self.key else None
        _trace("provider for", self.key, "mutex", mutex is not None)
        if mutex is None or not _take(mutex, self.key):
            # Another thread holds the API lock and may be waiting for this thread's frames: no SB
            # call is safe. LLDB's own frames this time.
            _trace("provider: the target is held: LLDB's frames")
            return False
        try:
            return self._plan()
        finally:
            mutex.unlock()

    def _plan(self):
        frames = self.input_frames
        thread = frames.GetThread()
        tid = thread.GetThreadID()
        did, gid = self.key
        with _state.lock:
            chains = _state.chains.get(self.key)
        if chains is not None and tid in chains[1]:
            # A pending chain (OS plugin thread, of this stop: LLDB made it from the threads the OS
            # plugin gave): its frames are all asyncdac's; its input frames (LLDB unwinding a
            # made-up register set) are not read.
            return _ChainFrames(*chains[1][tid])
        if not _runtime_here(self.key, thread.GetProcess()):
            # No .NET runtime in the process at this stop: LLDB's own frames, not even counted (each
            # stop of a step in a C program would otherwise unwind and describe the whole stack).
            _trace("thread", tid, "no .NET runtime at this stop: LLDB's frames")
            return False
        nested = _nesting.__dict__.setdefault("plans", 0)
        count = frames.GetSize()
        if _nesting.__dict__.get("plans", 0) != nested:
            # Reading the input frames ran this provider for another Thread object of the same thread
            # (LLDB wraps a process's threads after its OS plugin is loaded again): the input frames
            # are that provider's frames, already asyncdac's. Any further SB call would abort LLDB.
            _trace("input frames made by a nested provider: passed through")
            return False
        _nesting.plans = nested + 1
        # The C side reads the input frames through LLDB's C++ API (the object's address: SWIG's
        # `this`): describing them here took about 15 SB calls a frame.
        reply = _call({"op": "thread", "debugger": did, "target": gid, "tid": tid, "input_frames": int(frames.this)})
        _trace("thread", tid, count, "frames in,", reply.get("error") or "%d out" % len(reply.get("frames") or []))
        if "error" in reply or not reply.get("frames"):
            return False
        return reply["frames"]


def _runtime_here(key, process):
    """Whether the C side finds a .NET runtime in the process at this stop: asked once a stop (a
    process may load one later). The caller holds the target's API lock."""
    stop_id = process.GetStopID(True)
    with _state.lock:
        known = _state.runtimes.get(key)
    if known is not None and known[0] == stop_id:
        return known[1]
    did, gid = key
    here = "error" not in _call({"op": "runtime", "debugger": did, "target": gid})
    modules = process.GetTarget().GetNumModules()
    with _state.lock:
        _state.runtimes[key] = (stop_id, here, modules)
    return here


# ---- pending chains as threads ----------------------------------------------------------------

class OperatingSystemPlugIn(object):
    """LLDB creates one for every process (live or core) and asks it for threads whenever it reads
    them (load, attach, each stop): the first time, it registers the frame provider on the
    process's target, before any frame of that stop is built; at each stop, before LLDB unwinds,
    C shows LLDB the native modules of a process in a container (LLDB finds none of them, or the
    host's files at their paths; a command's refresh would come after the stop is printed, and
    lldb-dap runs none); after `async threads enable`, it adds one thread per pending chain (frames
    from the provider)."""

    def __init__(self, process):
        self.process = process
        self.target = process.GetTarget()
        self.key = _key(self.target)
        self.registered = False
        with _state.lock:
            _state.mutexes[self.key] = self.target.GetAPIMutex()
            _state.targets[self.key] = self.target
            # A new process of the target (launched again) counts its stops from the start: what
            # was kept per stop of the last one does not hold.
            for kept in (_state.chains, _state.runtimes):
                kept.pop(self.key, None)

    def get_thread_info(self):
        if not self.registered:
            # Not in __init__: LLDB 22.1.8 creates this object while attaching, before it loads the
            # modules; frames built then (through a provider) stay one frame deep for that stop.
            self.registered = register(self.target) != 0
        did, gid = self.key
        stop_id = self.process.GetStopID(True)
        with _state.lock:
            known = _state.chains.get(self.key)
        if known and known[0] == stop_id:
            threads = known[2]
        else:
            mutex = _mutex(self.key)
            if mutex is None or not _take(mutex, self.key):
                # Another thread holds the target: no pending chains this time (LLDB asks again
                # at the next stop); what was found about a runtime stays (see _applies).
                return []
            try:
                # A process in a container: its native modules, which LLDB did not find, before
                # LLDB unwinds this stop's frames (C does nothing for other processes).
                _call({"op": "modules", "debugger": did, "target": gid})
                # Whether the process has a .NET runtime, for the providers of this stop's threads
                # (_applies).
                here = _runtime_here(self.key, self.process)
                reply = _call({"op": "chains", "debugger": did, "target": gid})
            finally:
                mutex.unlock()
            if not here:
                _trace("stop", stop_id, "of", self.key, "has no .NET runtime: no provider for its threads")
            table = reply.get("table") or []
            threads = [{"tid": th["tid"], "name": th["name"], "state": "stopped", "stop_reason": "none"}
                       for th in reply.get("threads") or []]
            # The chains share their frames' text (the table): each thread's frames are made from it
            # when the provider first asks.
            frames = {th["tid"]: (table, th["frames"]) for th in reply.get("threads") or []}
            with _state.lock:
                _state.chains[self.key] = (stop_id, frames, threads)
        return threads

    def does_plugin_report_all_threads(self):
        # False: the process's own threads stay, the chains' threads come in addition.
        return False

    def get_register_info(self):
        return {"sets": ["General Purpose Registers"], "registers": [
            {"name": "rip", "bitsize": 64, "offset": 0, "encoding": "uint", "format": "hex", "set": 0,
             "gcc": 16, "dwarf": 16, "generic": "pc", "alt-name": "pc"},
            {"name": "rsp", "bitsize": 64, "offset": 8, "encoding": "uint", "format": "hex", "set": 0,
             "gcc": 7, "dwarf": 7, "generic": "sp", "alt-name": "sp"},
            {"name": "rbp", "bitsize": 64, "offset": 16, "encoding": "uint", "format": "hex", "set": 0,
             "gcc": 6, "dwarf": 6, "generic": "fp", "alt-name": "fp"}]}

    def get_register_data(self, tid):
        # A chain has no registers: its frames come from the provider. The innermost frame's pc
        # keeps LLDB's own unwinder (one frame, no caller) from reading anything.
        with _state.lock:
            chains = _state.chains.get(self.key)
        pc = 0
        if chains and tid in chains[1] and chains[1][tid][1]:
            pc = chains[1][tid][1][0][2]
            pc = lldb.LLDB_INVALID_ADDRESS if pc is None else pc
        return pc.to_bytes(8, "little") + bytes(16)


# LLDB imports this file again when the OS plugin setting is set: the providers it registered must
# still be there by name.
for _k in list(_state.providers):
    _provider_class(_k)
