#!/usr/bin/env python3
"""Extracts the cDAC contract descriptor from a libcoreclr.so FILE, independently of asyncdac.

    descriptor.py <libcoreclr.so> [--gc workstation|server] [--json-out FILE] [--raw-out FILE]

How: parse the ELF64 (little-endian) section headers, find DotNetRuntimeContractDescriptor in
.dynsym, map its virtual address to a file offset through the PT_LOAD program headers, and read
the struct {u64 magic; u32 flags; u32 descriptor_size; ptr descriptor; u32 pointer_data_count;
u32 pad; ptr pointer_data}. In the file, the pointer fields are 0 and are filled at load time by
R_X86_64_RELATIVE relocations in .rela.dyn, so a pointer at address A is the addend of the
relocation whose r_offset is A. subDescriptors ([[idx], "pointer"]) are followed the same way:
pointer_data[idx] is the address of a pointer variable; if that variable has a RELATIVE
relocation (or non-zero file contents) it points at another descriptor struct, parsed recursively.
If it is only set at run time (e.g. in .bss) -- which is the case for the GC sub-descriptor
(g_gc_dac_vars.gc_descriptor) -- the file is scanned for other "DNCCDAC\0" descriptor structs and
the GC one whose GCIdentifiers global starts with the --gc flavour (default workstation, what the
samples run: System.GC.Server=false) is used. Anything still unfound is reported as unresolved.

Prints (or writes with --json-out) a summary:
  {"version", "baseline", "contracts": {name: version}, "types": N, "globals": N,
   "sub_descriptors": [names], "resolved_sub_descriptors": [names], "unresolved_sub_descriptors": [...],
   "pointer_size", "descriptor_vaddr"}
with counts after merging the resolved sub-descriptors. --raw-out writes the merged descriptor
JSON itself (types/globals/contracts objects).
"""
import json
import struct
import sys

MAGIC = 0x0043414443434E44  # "DNCCDAC\0"
R_X86_64_RELATIVE = 8
SYMBOL = b"DotNetRuntimeContractDescriptor"


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise SystemExit(f"descriptor.py: {path}: not a little-endian ELF64 file")
        (self.e_phoff, self.e_shoff) = struct.unpack_from("<QQ", d, 0x20)
        (self.e_phentsize, self.e_phnum, self.e_shentsize, self.e_shnum, self.e_shstrndx) = struct.unpack_from("<HHHHH", d, 0x36)
        self.loads = []
        for i in range(self.e_phnum):
            p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align = struct.unpack_from(
                "<IIQQQQQQ", d, self.e_phoff + i * self.e_phentsize)
            if p_type == 1:
                self.loads.append((p_vaddr, p_offset, p_filesz, p_memsz))
        self.sections = {}
        shdrs = []
        for i in range(self.e_shnum):
            shdrs.append(struct.unpack_from("<IIQQQQIIQQ", d, self.e_shoff + i * self.e_shentsize))
        shstr = shdrs[self.e_shstrndx]
        for sh in shdrs:
            name_off = shstr[4] + sh[0]
            name = d[name_off:d.index(b"\0", name_off)].decode()
            self.sections[name] = sh
        self.relocs = {}
        for name, sh in self.sections.items():
            if sh[1] == 4:  # SHT_RELA
                off, size, entsize = sh[4], sh[5], sh[9] or 24
                for k in range(size // entsize):
                    r_offset, r_info, r_addend = struct.unpack_from("<QQq", d, off + k * entsize)
                    if (r_info & 0xFFFFFFFF) == R_X86_64_RELATIVE:
                        self.relocs[r_offset] = r_addend

    def file_offset(self, vaddr, size=1):
        for v, o, fs, ms in self.loads:
            if v <= vaddr and vaddr + size <= v + fs:
                return o + (vaddr - v)
        return None  # not backed by the file (e.g. .bss) or unmapped

    def read(self, vaddr, size):
        off = self.file_offset(vaddr, size)
        if off is None:
            raise ValueError(f"address 0x{vaddr:x} (+{size}) is not backed by the file")
        return self.data[off:off + size]

    def pointer(self, vaddr):
        """Value of the pointer at vaddr after load-time RELATIVE relocation (0 if unknown)."""
        if vaddr in self.relocs:
            return self.relocs[vaddr]
        off = self.file_offset(vaddr, 8)
        if off is None:
            return 0
        return struct.unpack_from("<Q", self.data, off)[0]

    def dynsym(self, wanted):
        dynsym, dynstr = self.sections.get(".dynsym"), self.sections.get(".dynstr")
        if dynsym is None or dynstr is None:
            raise SystemExit("descriptor.py: no .dynsym/.dynstr")
        off, size, entsize = dynsym[4], dynsym[5], dynsym[9] or 24
        stroff = dynstr[4]
        for k in range(size // entsize):
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", self.data, off + k * entsize)
            n = self.data[stroff + st_name:self.data.index(b"\0", stroff + st_name)]
            if n == wanted and st_shndx != 0:
                return st_value
        return None


def parse_descriptor(elf, vaddr):
    raw = elf.read(vaddr, 40)
    magic, flags, size = struct.unpack_from("<QII", raw, 0)
    if magic != MAGIC:
        raise ValueError(f"bad magic 0x{magic:x} at 0x{vaddr:x}")
    if flags & 2:
        raise ValueError("32-bit descriptor: not supported by this script")
    desc_ptr = elf.pointer(vaddr + 16)
    count = struct.unpack_from("<I", raw, 24)[0]
    pdata_ptr = elf.pointer(vaddr + 32)
    text = elf.read(desc_ptr, size).rstrip(b"\0").decode("utf-8")
    doc = json.loads(text)
    pointer_data = [elf.pointer(pdata_ptr + 8 * i) for i in range(count)] if pdata_ptr else []
    return {"vaddr": vaddr, "flags": flags, "json": doc, "pointer_data": pointer_data}


def index_of(value):
    # [[idx], "pointer"] or [[idx]] or [idx]
    v = value[0] if isinstance(value, list) else value
    if isinstance(v, list):
        v = v[0]
    return int(v, 0) if isinstance(v, str) else int(v)


def merge(elf, desc, merged, resolved, unresolved, names, depth=0):
    doc = desc["json"]
    for key in ("types", "globals", "contracts"):
        for k, v in doc.get(key, {}).items():
            if k in merged[key]:
                raise SystemExit(f"descriptor.py: duplicate {key[:-1]} '{k}' while merging sub-descriptors")
            merged[key][k] = v
    for name, value in doc.get("subDescriptors", {}).items():
        names.append(name)
        idx = index_of(value)
        slot = desc["pointer_data"][idx] if idx < len(desc["pointer_data"]) else 0
        target = elf.pointer(slot) if slot else 0
        if not target and name == "GC":
            # The GC sets g_gc_dac_vars.gc_descriptor at start-up, so the file has no value for it.
            # libcoreclr carries one descriptor per GC flavour: pick by the GCIdentifiers global.
            target = find_gc_descriptor(elf, GC_FLAVOR[0])
            if target:
                resolved_by_scan.append(f"GC ({GC_FLAVOR[0]}, found by scanning for the DNCCDAC magic at {hex(target)})")
        if not target or depth > 4:
            unresolved.append({"name": name, "index": idx, "slot": hex(slot),
                               "reason": "the pointer variable is only set at run time (no relocation / file contents)"})
            continue
        try:
            sub = parse_descriptor(elf, target)
        except ValueError as e:
            unresolved.append({"name": name, "index": idx, "slot": hex(slot), "reason": str(e)})
            continue
        resolved.append(name)
        merge(elf, sub, merged, resolved, unresolved, names, depth + 1)


GC_FLAVOR = ["workstation"]
resolved_by_scan = []


def find_gc_descriptor(elf, flavor):
    magic = MAGIC.to_bytes(8, "little")
    i = 0
    while True:
        i = elf.data.find(magic, i)
        if i < 0:
            return 0
        for v, o, fs, ms in elf.loads:
            if o <= i < o + fs:
                try:
                    d = parse_descriptor(elf, v + (i - o))["json"]
                except (ValueError, UnicodeDecodeError, json.JSONDecodeError):
                    break
                ident = d.get("globals", {}).get("GCIdentifiers")
                ident = ident[0] if isinstance(ident, list) else ident
                if "GC" in d.get("contracts", {}) and isinstance(ident, str) and ident.split(",")[0].strip() == flavor:
                    return v + (i - o)
                break
        i += 1


def main(argv):
    args = argv[1:]
    out = raw_out = None
    if "--json-out" in args:
        i = args.index("--json-out")
        out = args[i + 1]
        del args[i:i + 2]
    if "--raw-out" in args:
        i = args.index("--raw-out")
        raw_out = args[i + 1]
        del args[i:i + 2]
    excerpt = None
    if "--excerpt-out" in args:
        i = args.index("--excerpt-out")
        excerpt = args[i + 1]
        del args[i:i + 2]
    if "--gc" in args:
        i = args.index("--gc")
        GC_FLAVOR[0] = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    elf = Elf(args[0])
    vaddr = elf.dynsym(SYMBOL)
    if vaddr is None:
        print(f"descriptor.py: {args[0]}: no {SYMBOL.decode()} in .dynsym", file=sys.stderr)
        return 1
    main_desc = parse_descriptor(elf, vaddr)
    merged = {"types": {}, "globals": {}, "contracts": {}}
    resolved, unresolved, names = [], [], []
    merge(elf, main_desc, merged, resolved, unresolved, names)
    doc = main_desc["json"]
    summary = {
        "module": args[0],
        "descriptor_vaddr": hex(vaddr),
        "version": doc.get("version"),
        "baseline": doc.get("baseline"),
        "pointer_size": 8,
        "contracts": {k: (v if isinstance(v, str) else str(v)) for k, v in merged["contracts"].items()},
        "types": len(merged["types"]),
        "globals": len(merged["globals"]),
        "main_types": len(doc.get("types", {})),
        "main_globals": len(doc.get("globals", {})),
        "sub_descriptors": names,
        "resolved_sub_descriptors": resolved,
        "unresolved_sub_descriptors": unresolved,
        "resolved_by_scan": resolved_by_scan,
    }
    text = json.dumps(summary, indent=2) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if excerpt:
        # What later issues depend on: the async object model and the DebugInfo contract's inputs.
        want_types = ["ContinuationObject", "AsyncResumeInfo", "AsyncMethodData", "RealCodeHeader",
                      "EEJitManager", "ReadyToRunInfo", "CodeHeapListNode", "MethodDesc", "MethodDescCodeData",
                      "PatchpointInfo", "InstantiatedMethodDesc", "StoredSigMethodDesc", "DynamicMethodDesc"]
        want_globals = ["ContinuationMethodTable", "ContinuationSingletonEEClass", "FeatureOnStackReplacement",
                        "ObjectToMethodTableUnmask", "MethodDescAlignment", "ExecutionManagerCodeRangeMapAddress",
                        "StubCodeBlockLast", "PlatformMetadata", "Architecture", "OperatingSystem", "RID"]
        ex = {
            "source": "Microsoft.NETCore.App.Runtime.linux-x64 11.0.0 runtimes/linux-x64/native/libcoreclr.so",
            "extracted_by": "tests/dotnet/descriptor.py --excerpt-out",
            "version": doc.get("version"),
            "baseline": doc.get("baseline"),
            "contracts": {k: merged["contracts"][k] for k in ("DebugInfo", "Object", "RuntimeTypeSystem", "ExecutionManager",
                                                              "CodeVersions", "Loader", "EcmaMetadata", "PlatformMetadata",
                                                              "PrecodeStubs", "StackWalk", "Thread", "GC")
                          if k in merged["contracts"]},
            "contracts_absent": [k for k in ("Async", "AsyncContinuation", "Continuation") if k not in merged["contracts"]],
            "types": {k: merged["types"][k] for k in want_types if k in merged["types"]},
            "types_absent": [k for k in want_types if k not in merged["types"]],
            "globals": {k: merged["globals"][k] for k in want_globals if k in merged["globals"]},
            "globals_absent": [k for k in want_globals if k not in merged["globals"]],
        }
        with open(excerpt, "w") as f:
            json.dump(ex, f, indent=2)
            f.write("\n")
    if raw_out:
        with open(raw_out, "w") as f:
            json.dump({"version": doc.get("version"), "baseline": doc.get("baseline"), **merged}, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
