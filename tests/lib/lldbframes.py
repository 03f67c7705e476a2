"""lldbframes - reading LLDB's backtraces out of `lldb -b` output, for the tests of asyncdac's frames
in LLDB (tests/integration/test_lldb_frames.py, test_lldb_dap.py).

LLDB prints stop and selection events from another thread: in batch mode their lines land in the
output of later commands. With QUIET as pre-commands an event is a thread line and its frame #0
line, after an optional "Process N stopped"; section() drops them, frames_of() skips them.
"""
import re

import adactest as t
import btsamples as b

QUIET = ["settings set stop-disassembly-display never", "settings set stop-line-count-before 0",
         "settings set stop-line-count-after 0"]
EVENT = re.compile(r"^Process \d+ stopped\n|^[* ] thread #\d+(, name = '[^']*')?(, queue = '[^']*')?(, stop reason = .*)?\n"
                   r"(    frame #0: .*\n)?", re.M)
THREAD = re.compile(r"^[* ] thread #(\d+)\b.*$")
# (A frame without an address, as LLDB prints one whose pc is invalid: pc None.)
FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): (?:(0x[0-9a-f]+)(?: |$))?(.*)$")


def raw_section(out, command, nth=0):
    """The output of the nth run of command, as printed."""
    found = [text for cmd, text in b.lldb_sections(out) if cmd == command]
    if len(found) <= nth:
        t.fail(f"no output for {command!r} (#{nth}) in lldb's output:\n{out[-3000:]}")
        return ""
    return found[nth]


def section(out, command, nth=0):
    """The output of the nth run of command without LLDB's events (backtraces: use frames_of)."""
    return EVENT.sub("", raw_section(out, command, nth))


def pc_of(m):
    return int(m.group(2), 16) if m.group(2) else None


def frames_of(text, thread=None):
    """[(index, pc, text)] of a backtrace in text: the longest run of frame lines after the line of
    `thread` (any thread when None; events repeat a thread's first frame alone), numbered 0, 1, ...
    in order. With `thread`, nothing LLDB printed between two of its frames (an event: a "Process N
    stopped" line, a thread line and that thread's frame #0, or any other line) ends the run: only
    the next frame in sequence continues it."""
    runs, cur = [], None
    for line in text.splitlines():
        m = THREAD.match(line)
        if m:
            if thread is not None and cur:
                # An event printed into the middle of the thread's backtrace (its frame #0 line,
                # out of sequence, is skipped below): the backtrace goes on after it.
                continue
            cur = [] if thread is None or int(m.group(1)) == thread else None
            if cur is not None:
                runs.append(cur)
            continue
        m = FRAME.match(line)
        if m and cur is not None:
            # A frame line out of sequence is an event's copy of a thread's first frame that LLDB
            # printed into the middle of the backtrace (asynchronous output, seen under load).
            if int(m.group(1)) == len(cur):
                cur.append((int(m.group(1)), pc_of(m), m.group(3) or ""))
        elif cur and thread is None:
            cur = None
    if thread is None and not runs:
        runs = [[(int(m.group(1)), pc_of(m), m.group(3) or "")
                 for m in map(FRAME.match, text.splitlines()) if m]]
    return max(runs, key=len) if runs else []


def selected_index(out, command):
    """The index of the thread `thread select ...` selected (its echo of the thread)."""
    m = re.search(r"^\* thread #(\d+)", raw_section(out, command), re.M)
    return int(m.group(1)) if m else None
