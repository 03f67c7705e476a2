"""cli.core_crafted: the core backend on small cores written here byte by byte, so every rule is
checked with exact bytes: segment lookup, p_filesz < p_memsz, p_filesz == 0, overlapping
segments, the mapped-file fallback (core data first, file size limits, a file that differs from
the core's copy of its first page is not used), short reads at holes, module grouping (base at
the offset-0 mapping even when a later part of the file is mapped lower), NT_PRSTATUS registers,
the thread a runtime's record names by another id (matched by stack), and one exact error per kind
of damage."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

from corecore import NT_FILE, NT_PRSTATUS, PAGE, note, nt_file, prstatus, write_core  # noqa: E402

d = tl.tmpdir()


def probe(core, *args, rc=0):
    got_rc, out, err = tl.probe(["core", core] + [str(a) for a in args])
    t.check_eq((got_rc, err), (rc, ""), f"probe {os.path.basename(core)} {' '.join(map(str, args))}: exit, stderr")
    return out.splitlines()[1:]


def read(core, addr, length):
    lines = probe(core, "read", hex(addr), length)
    return bytes.fromhex(lines[1]) if len(lines) > 1 else b""


# The mapped file: 3 pages, every byte distinct by offset.
lib = os.path.join(d, "lib.bin")
lib_data = bytes((i * 7 + i // 251) & 0xFF for i in range(3 * PAGE))
with open(lib, "wb") as f:
    f.write(lib_data)
missing = os.path.join(d, "missing.bin")

files = [
    (0x10000, 0x11000, 0, lib),        # the ELF-header page, kept by the core
    (0x11000, 0x13000, 1, lib),        # core holds its first half page only
    (0x8000, 0x9000, 2, lib),          # a later part of the file, mapped lower
    (0x30000, 0x33000, 2, lib),        # runs past the end of the file
    (0x20000, 0x21000, 0, missing),    # a file that is not on disk
]
regs = [0x1000 + i for i in range(27)]
notes = [nt_file(files), prstatus(4242, regs), prstatus(4243, [0] * 27)]
loads = [
    (0x10000, 0x1000, lib_data[:PAGE]),
    (0x11000, 0x2000, b"D" * 0x800),   # p_filesz < p_memsz
    (0x20000, 0x1000, b""),            # p_filesz == 0
    (0x40000, 0x1000, b"E" * 0x1000),  # overlapped by the next one from 0x40800
    (0x40800, 0x1000, b"F" * 0x1000),
]
core = write_core(os.path.join(d, "crafted.core"), loads, notes)

# lib.bin's module ends before missing.bin's mapping: the part mapped again at 0x30000 is not in it
# (the runtime maps an assembly twice, far apart; the span between holds other modules).
t.check_eq(probe(core, "modules", "threads"),
           [f"0x10000 0x13000 {lib}", f"0x20000 0x21000 {missing}", "1 4242 ", "2 4243 "], "modules and threads")
t.check_eq(probe(core, "regs", 4242), ["rip 0x1010 rsp 0x1013 rbp 0x1004 fs_base 0x1015"], "NT_PRSTATUS registers")
# The thread the runtime records by another id (a pid namespace's), with its stack's bounds: the
# core's thread of that id, else the one whose stack pointer is inside the stack, else the id.
for args, want, what in (((4243, 0x1000, 0x2000), 4243, "an id of the core's: itself, whatever its stack"),
                         ((9, 0x1000, 0x2000), 4242, "another id: the thread whose rsp (0x1013) is in the stack"),
                         ((9, 0x1014, 0x2000), 9, "no thread's rsp in the stack: the id"),
                         ((9, 0x1000, 0x1013), 9, "the stack's base is exclusive"),
                         ((9, 0, 0x2000), 9, "the stack's limit unknown: the id"),
                         ((9, 0x2000, 0x1000), 9, "bounds out of order: the id")):
    t.check_eq(probe(core, "thread-of", *args), [str(want)], f"thread-of {args}: {what}")
twins = write_core(os.path.join(d, "twins.core"), loads, [prstatus(4242, regs), prstatus(4244, regs)])
t.check_eq(probe(twins, "thread-of", 9, 0x1000, 0x2000), ["9"], "thread-of: two threads in the stack: the id")
t.check_eq(read(core, 0x10ff0, 32), lib_data[0xFF0:PAGE] + b"D" * 16, "core page, then the next segment")
t.check_eq(read(core, 0x117F0, 32), b"D" * 16 + lib_data[0x1800:0x1810], "past p_filesz: from the file")
t.check_eq(read(core, 0x12FF0, 32), lib_data[0x2FF0:0x3000], "end of the mapping: short")
t.check_eq(read(core, 0x8000, 16), lib_data[0x2000:0x2010], "no segment: from the file")
t.check_eq(read(core, 0x30FF0, 32), lib_data[0x2FF0:0x3000], "past the end of the file: short")
t.check_eq(read(core, 0x20000, 16), b"", "p_filesz == 0 and no file: unreadable")
t.check_eq(read(core, 0x40000, 0x1800), b"E" * 0x800 + b"F" * 0x1000, "overlapping segments: the later wins")
t.check_eq(read(core, 0x3FFF0, 32), b"", "hole before a segment")
t.check_eq(read(core, 0xFFFFFFFFFFFFFFF0, 64), b"", "top of the address space")

# The same core with a different first page: the file on disk is not the one the core saw.
stale = write_core(os.path.join(d, "stale.core"), [(0x10000, 0x1000, b"X" * PAGE)] + loads[1:], notes)
t.check_eq(read(stale, 0x117F0, 32), b"D" * 16, "a file unlike the core's first page is not used")
t.check_eq(read(stale, 0x8000, 16), b"", "a file unlike the core's first page is not used (no segment)")

# ---- damage, one exact message each ----


def expect_open_error(name, loads, notes, message, machine=62):
    path = write_core(os.path.join(d, name), loads, notes, machine)
    t.check_eq(tl.probe(["core", path]), (1, f"error: {path}: {message}\n", ""), f"{name}: open error")


expect_open_error("short-prstatus.core", loads, [note(NT_PRSTATUS, b"\0" * 100)],
                  "NT_PRSTATUS note has 100 bytes, want at least 328")
expect_open_error("overlap.core", loads, [nt_file([(0x1000, 0x3000, 0, lib), (0x2000, 0x4000, 0, lib)])],
                  "NT_FILE mappings overlap at 0x2000")
expect_open_error("backwards.core", loads, [nt_file([(0x3000, 0x1000, 0, lib)])],
                  f"NT_FILE mapping 0 ({lib}) is malformed")
expect_open_error("no-paths.core", loads, [note(NT_FILE, struct.pack("<QQQQQ", 1, PAGE, 0x1000, 0x2000, 0))],
                  "NT_FILE note lacks the path of mapping 0")
expect_open_error("short-nt-file.core", loads, [note(NT_FILE, struct.pack("<QQ", 2, PAGE))],
                  "NT_FILE note is too short for 2 mappings")
expect_open_error("wrapping-load.core", [(0xFFFFFFFFFFFFF000, 0x2000, b"")], notes,
                  "program header 1 is out of range")
expect_open_error("i386.core", loads, notes, "not an x86-64 core file (class 2, machine 3)", machine=3)
# A thread whose pid is 0 (or negative) leaves the other threads' unwinding alone (libdwfl's own
# core thread walk ended there, so no thread was unwound); that thread itself is refused.
path = write_core(os.path.join(d, "pid0.core"), loads, [prstatus(4242, regs), prstatus(0, regs)])
t.check_eq(tl.probe(["core", path, "regs", "4242", "frames", "4242"]),
           (0, "kind core\nrip 0x1010 rsp 0x1013 rbp 0x1004 fs_base 0x1015\n0x1010 ? ?\n", ""),
           "a thread with pid 0: another thread still unwinds")
t.check_eq(tl.probe(["core", path, "frames", "0"]),
           (1, "kind core\n"
               f"error: {path}: cannot unwind thread 0: its NT_PRSTATUS pid is no thread id\n", ""),
           "a thread with pid 0: unwinding it fails with one error")
# A segment whose bytes lie past the end of the file.
path = write_core(os.path.join(d, "past-eof.core"), loads, notes)
size = os.path.getsize(path)
with open(path, "r+b") as f:
    f.seek(64 + 56 * 5 + 32)  # p_filesz of the last PT_LOAD
    f.write(struct.pack("<Q", 0x100000))
    f.seek(64 + 56 * 5 + 40)  # p_memsz
    f.write(struct.pack("<Q", 0x100000))
want_end = size - 0x1000 + 0x100000
t.check_eq(tl.probe(["core", "--strict", path]),
           (1, f"error: {path}: core file is truncated ({size} of {want_end} bytes)\n", ""),
           "segment past the end, --strict")
# Best effort: one warning line; the segment's bytes up to the end of the file are read, the rest fail.
rc, out, err = tl.probe(["core", path, "read", "0x40800", "0x2000", "read", "0x40000", "16"])
t.check_eq((rc, err), (0, ""), "segment past the end, best effort: exit code and stderr")
t.check_eq(out.splitlines()[:3],
           [f"warning: {path}: core file is truncated ({size} of {want_end} bytes): 1 of 5 memory segments lack "
            f"{0x100000 - 0x1000} bytes; reads there fail", "kind core", "read 4096"],
           "segment past the end, best effort: the warning, then the bytes the file holds")
t.check_eq(out.splitlines()[4:5], ["read 16"], "segment past the end, best effort: other segments read")

t.finish()
