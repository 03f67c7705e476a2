"""cli.core_file_fallback: the core backend reads bytes a core lacks from the mapped file on disk.

The descriptor JSON of the fake libcoreclr.so lives in read-only data, which gcore does not dump.
Through adac-probe (the backend, not the CLI) the test shows that the JSON's page is absent from
the core's PT_LOAD segments, that reading it still gives the library's bytes, that a read runs on
from core data into file data, that a read stops at a hole, and that without the file on disk the
same read and `asyncdac runtime` fail, as does the read when another file has taken the library's
place."""
import json
import os
import shutil
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402

d = tl.tmpdir()
# A private copy of the target and its library, so the library can be taken away later.
os.makedirs(os.path.join(d, "fake"))
exe = os.path.join(d, "synthetic-target")
lib = os.path.join(d, "fake", "libcoreclr.so")
shutil.copy(tl.TARGET, exe)
shutil.copy(tl.FAKE_LIB, lib)
lib = os.path.realpath(lib)

p, _ = t.start([exe, "spin"], env={"LD_LIBRARY_PATH": os.path.dirname(lib)})
mappings = tl.maps(p.pid)
base, end = tl.module_range(mappings, lib)
core = t.gcore(p.pid, os.path.join(d, "spin.core"))
p.send_signal(signal.SIGKILL)
p.wait(timeout=10)


def probe(*args):
    rc, out, err = tl.probe(["core", core] + [str(a) for a in args])
    t.check_eq((rc, err), (0, ""), f"probe {' '.join(map(str, args))}: exit code and stderr")
    lines = out.splitlines()
    t.check_eq(lines[:1], ["kind core"], "probe: backend kind")
    return lines[1:]


def read(addr, length):
    """(bytes obtained, data) through the core backend."""
    lines = probe("read", hex(addr), length)
    n = int(lines[0].split()[1])
    return n, bytes.fromhex(lines[1]) if n else b""


def lib_bytes(addr, length):
    """What the library file holds at runtime address addr, by the live process's mappings."""
    start, _, _, offset, _ = next(m for m in mappings if m[4] == lib and m[0] <= addr < m[1])
    with open(lib, "rb") as f:
        f.seek(offset + addr - start)
        return f.read(length)


# The module list names the copy, based where the live process had it.
mods = [line.split() for line in probe("modules")]
t.check([hex(base), hex(end), lib] in mods, f"module {lib} at 0x{base:x}-0x{end:x} not in {mods}")

# The descriptor (writable data, in the core) points at the JSON (read-only data, not in it).
desc = base + tl.elf_dynsym(lib, tl.DESCRIPTOR_SYMBOL)
t.check_eq(probe("sym", "libcoreclr.so", tl.DESCRIPTOR_SYMBOL), [hex(desc)], "descriptor symbol")
t.check(tl.core_in_file(core, desc), "the descriptor struct itself should be in the core")
n, hdr = read(desc, 40)
t.check_eq(n, 40, "descriptor header bytes")
magic, flags, json_size, json_addr = struct.unpack_from("<8sIIQ", hdr)
t.check_eq(magic, b"DNCCDAC\0", "descriptor magic")
absent = [a for a in range(json_addr, json_addr + json_size) if not tl.core_in_file(core, a)]
t.check_eq(len(absent), json_size, "JSON bytes absent from the core's PT_LOAD segments")

n, text = read(json_addr, json_size)
t.check_eq(n, json_size, "JSON bytes read through the file fallback")
t.check_eq(text, lib_bytes(json_addr, json_size), "JSON bytes equal the library's")
try:
    doc = json.loads(text.rstrip(b"\0"))
    t.check_eq(doc.get("contracts"), {"Object": "c1", "RuntimeTypeSystem": "c1", "LegacyInteger": 2},
               "JSON contracts")
except ValueError as e:
    t.fail(f"JSON read through the fallback does not parse: {e}")

# A read from the core's copy of the ELF header page straight into file-only pages.
seg = next(s for s in tl.core_loads(core) if s[0] == base)
edge = base + seg[3]
t.check(not tl.core_in_file(core, edge), "the page after the header page should not be in the core")
n, data = read(edge - 16, 64)
t.check_eq((n, data), (64, lib_bytes(edge - 16, 64)), "read across core data into file data")

# A read running off the last byte the core or a file provides stops there (short count).
files = tl.core_nt_file(core)


def readable(a):
    return tl.core_in_file(core, a) or any(s <= a < e for s, e, _, _ in files)


hole = next(v + m for v, m, _, _ in sorted(tl.core_loads(core)) if not readable(v + m) and readable(v + m - 1))
n, _ = read(hole - 16, 64)
t.check_eq(n, 16, f"read running into the hole at 0x{hole:x}")

# The CLI succeeds on this core, then fails once the library is gone from disk.
rc, out, err = tl.cli(["runtime", core])
t.check_eq((rc, err), (0, ""), "runtime with the library on disk")
tl.check_runtime_text(out, lib, base, "runtime with the library on disk")
os.rename(lib, lib + ".away")
t.check_eq(read(json_addr, json_size)[0], 0, "JSON bytes with the library gone")
rc, out, err = tl.cli(["runtime", core])
t.check_eq((rc, out, t.normalize(err)),
           (1, "", f"asyncdac: error: libcoreclr.so: contract descriptor JSON: cannot read {json_size} bytes at 0xADDR "
                   f"(got 0)\n"), "runtime with the library gone")

# A different file at the library's path (say, rebuilt since the core was taken) is not used:
# its first page differs from the header page the core holds.
shutil.copy(tl.NODESC_LIB, lib)
json_off = next(m[3] + json_addr - m[0] for m in mappings if m[4] == lib and m[0] <= json_addr < m[1])
t.check(os.path.getsize(lib) >= json_off + json_size, "the replacement file is large enough to be misread")
t.check_eq(read(json_addr, json_size)[0], 0, "JSON bytes with a different file at the library's path")
os.rename(lib + ".away", lib)
t.check_eq(read(json_addr, json_size), (json_size, text), "JSON bytes with the library back")

t.finish()
