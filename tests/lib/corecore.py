"""corecore - reads and patches the memory image of an ELF64 core file by virtual address.

A core's memory is its PT_LOAD segments: [p_vaddr, p_vaddr + p_filesz) is stored at file offset
p_offset (bytes of [p_filesz, p_memsz) are not in the file). Tests use this to corrupt objects in a
copy of a real core (a Continuation's Next, ResumeInfo, State ...) and to pick addresses that no
segment maps. python3 standard library only.

    core = Core(path)                      # parses the program headers (PN_XNUM handled)
    core.read(addr, n) -> bytes            # ValueError if not entirely in the file
    core.read_u64(addr), core.read_u32(addr)
    core.write(addr, data)                 # patches the file in place (same checks)
    core.write_u64(addr, v), core.write_u32(addr, v)
    core.mapped(addr) -> bool              # inside some PT_LOAD's [vaddr, vaddr + memsz)
    core.notes, core.headers_end           # [(offset, filesz)] of the PT_NOTEs; where the headers end
    core.file_offset(addr, n) -> int       # where those n bytes are in the file
    core.prstatus_pids() -> [(offset, pid)] # each NT_PRSTATUS note's pr_pid and where it is in the file
    patched_copy(src, dst, [(addr, bytes), ...]) -> Core   # copies src to dst, then patches dst

and writes small cores byte by byte (crafted-core tests, fuzz seeds):

    write_core(path, [(vaddr, memsz, bytes), ...], [note(...), prstatus(tid, regs), nt_file(entries)])
"""
import shutil
import struct

PT_LOAD = 1
PT_NOTE = 4
PRSTATUS_PID_OFF = 32  # pr_pid in x86-64's struct elf_prstatus
PN_XNUM = 0xFFFF
PAGE = 4096
NT_PRSTATUS, NT_FILE = 1, 0x46494C45


class Core:
    def __init__(self, path):
        self.path = path
        self.loads = []  # (vaddr, memsz, offset, filesz), sorted by vaddr
        self.notes = []  # (offset, filesz) of each PT_NOTE that has bytes
        with open(path, "rb") as f:
            ident = f.read(64)
            if len(ident) < 64 or ident[:4] != b"\x7fELF":
                raise ValueError(f"{path}: not an ELF file")
            if ident[4] != 2 or ident[5] != 1:
                raise ValueError(f"{path}: not a little-endian ELF64 file")
            e_type, = struct.unpack_from("<H", ident, 16)
            if e_type != 4:
                raise ValueError(f"{path}: ELF type {e_type}, not a core (ET_CORE)")
            phoff, shoff = struct.unpack_from("<QQ", ident, 0x20)
            phentsize, phnum, shentsize = struct.unpack_from("<HHH", ident, 0x36)
            if phnum == PN_XNUM:
                # The real count is sh_info of section header 0.
                f.seek(shoff)
                sh0 = f.read(shentsize)
                phnum, = struct.unpack_from("<I", sh0, 0x2C)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
        self.headers_end = phoff + phentsize * phnum  # (the ELF header is first)
        if len(table) != phentsize * phnum:
            raise ValueError(f"{path}: truncated program header table")
        for i in range(phnum):
            p_type, _flags, offset, vaddr, _paddr, filesz, memsz, _align = struct.unpack_from(
                "<IIQQQQQQ", table, i * phentsize)
            if p_type == PT_LOAD:
                self.loads.append((vaddr, memsz, offset, filesz))
            elif p_type == PT_NOTE and filesz:
                self.notes.append((offset, filesz))
        self.loads.sort()

    def prstatus_pids(self):
        """[(file offset of pr_pid, pid)] of the NT_PRSTATUS notes, in the core's order."""
        found = []
        with open(self.path, "rb") as f:
            for offset, filesz in self.notes:
                f.seek(offset)
                data = f.read(filesz)
                at = 0
                while at + 12 <= len(data):
                    namesz, descsz, ntype = struct.unpack_from("<III", data, at)
                    desc = at + 12 + ((namesz + 3) & ~3)
                    if ntype == NT_PRSTATUS and desc + PRSTATUS_PID_OFF + 4 <= len(data):
                        found.append((offset + desc + PRSTATUS_PID_OFF,
                                      struct.unpack_from("<I", data, desc + PRSTATUS_PID_OFF)[0]))
                    at = desc + ((descsz + 3) & ~3)
        return found

    def _segment(self, addr):
        for seg in self.loads:
            vaddr, memsz = seg[0], seg[1]
            if vaddr <= addr < vaddr + memsz:
                return seg
        return None

    def mapped(self, addr):
        return self._segment(addr) is not None

    def file_offset(self, addr, n):
        seg = self._segment(addr)
        if seg is None:
            raise ValueError(f"0x{addr:x} is in no PT_LOAD segment of {self.path}")
        vaddr, _memsz, offset, filesz = seg
        if addr + n > vaddr + filesz:
            raise ValueError(f"0x{addr:x}+{n} is not stored in {self.path} (segment 0x{vaddr:x} has "
                             f"{filesz} bytes in the file)")
        return offset + (addr - vaddr)

    def read(self, addr, n):
        with open(self.path, "rb") as f:
            f.seek(self.file_offset(addr, n))
            data = f.read(n)
        if len(data) != n:
            raise ValueError(f"0x{addr:x}+{n}: short read from {self.path}")
        return data

    def write(self, addr, data):
        off = self.file_offset(addr, len(data))
        with open(self.path, "r+b") as f:
            f.seek(off)
            f.write(data)

    def read_u64(self, addr):
        return struct.unpack("<Q", self.read(addr, 8))[0]

    def read_u32(self, addr):
        return struct.unpack("<I", self.read(addr, 4))[0]

    def write_u64(self, addr, v):
        self.write(addr, struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF))

    def write_u32(self, addr, v):
        self.write(addr, struct.pack("<I", v & 0xFFFFFFFF))

    def unmapped_address(self, near=0xDEAD0000, step=0x100000):
        """A page-aligned address at or above `near` that no PT_LOAD segment covers."""
        a = near & ~0xFFF
        while self.mapped(a) or self.mapped(a + 0xFFF):
            a += step
        return a


def patched_copy(src, dst, patches):
    """Copies the core src to dst and applies [(address, bytes), ...] to the copy."""
    shutil.copyfile(src, dst)
    core = Core(dst)
    for addr, data in patches:
        core.write(addr, data)
    return core


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def note(ntype, desc, name=b"CORE"):
    n = name + b"\0"
    return struct.pack("<III", len(n), len(desc), ntype) + pad4(n) + pad4(desc)


def prstatus(tid, regs):
    """struct elf_prstatus (x86-64, 336 bytes): pr_pid at 32, pr_reg (27 longs) at 112."""
    desc = bytearray(336)
    struct.pack_into("<i", desc, PRSTATUS_PID_OFF, tid)
    struct.pack_into("<27Q", desc, 112, *regs)
    return note(NT_PRSTATUS, bytes(desc))


def nt_file(entries):
    """entries: (start, end, page offset, path)."""
    desc = struct.pack("<QQ", len(entries), PAGE)
    desc += b"".join(struct.pack("<QQQ", s, e, o) for s, e, o, _ in entries)
    desc += b"".join(p.encode() + b"\0" for _, _, _, p in entries)
    return note(NT_FILE, desc)


def core_bytes(loads, notes, machine=62):
    """An ELF64 x86-64 core: one PT_NOTE with the notes first, then loads: (vaddr, memsz, bytes
    held in the file)."""
    phnum = 1 + len(loads)
    blob = b"".join(notes)
    offset = 64 + 56 * phnum
    phdrs = [struct.pack("<IIQQQQQQ", 4, 0, offset, 0, 0, len(blob), 0, 4)]
    body = blob
    for vaddr, memsz, data in loads:
        phdrs.append(struct.pack("<IIQQQQQQ", 1, 4, offset + len(body), vaddr, 0, len(data), memsz, 1))
        body += data
    ehdr = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 4, machine, 1, 0, 64, 0, 0, 64, 56,
                                                            phnum, 64, 0, 0)
    return ehdr + b"".join(phdrs) + body


def write_core(path, loads, notes, machine=62):
    with open(path, "wb") as f:
        f.write(core_bytes(loads, notes, machine))
    return path
