#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz entry points:

    python3 tests/fuzz/make_corpus.py                  the hand-made seeds
    python3 tests/fuzz/make_corpus.py --real BUILD     also the seeds taken from real processes (files
                                                       named real_*), with BUILD's synthetic target
                                                       and fuzz-make-image, and .NET 11 samples
                                                       (scripts/dotnet-setup first)
Hand-made:

  corpus/signature/       the blobs of tests/unit/test_signature.c, valid and malformed, each after
                          the selector byte of fuzz_signature.c (kind, pointer size, no-namespace)
  corpus/managed_unwind/  the cases of tests/unit/test_managed_unwind.c (every unwind operation,
                          prologue offsets, frame registers, machine frames, chained entries, version
                          1 and 2 epilogs, malformed UNWIND_INFO) in fuzz_managed_unwind.c's layout
  corpus/ecma_metadata/   the metadata of tests/data/pdb/nested/nested.dll rewritten as uncompressed
                          ("#-") metadata with FieldPtr, MethodPtr and ParamPtr tables, which no
                          compiler-made file in the repository has
  corpus/core/            small cores written byte by byte (tests/lib/corecore.py): threads, NT_FILE
                          mappings, p_filesz < p_memsz, overlapping segments, PN_XNUM program headers
From real processes (--real):
  corpus/core/real_synthetic_gcore      gdb's gcore of BUILD's synthetic-target (coredump_filter 1:
                          anonymous memory only; its fake libcoreclr.so is read from the file)
  corpus/discovery/real_*, heap/real_*, chain/real_*
                          memory images (tests/fuzz/image.h) fuzz-make-image records from createdump
                          cores of the samples while `runtime --verbose`, `dumpheap --stat`,
                          `gcroot` (roots, workstation and server GC: objects kept by a stack slot
                          and a dependent handle, by the finalization queue, by a strong handle),
                          `locks` (the locks sample) and `bt`/`frame`/`ps` run (`ps --json` and `report`
                          on the deadlock sample: its await cycle and its threads waiting for each other;
                          `report`, `threadpool --items` and `clrthreads` on the starved sample's --mode
                          classic: a starved pool's queues and threads)

Files named regress_<slug> (reproducers of fixed bugs) and by 40 hex digits (inputs scripts/fuzz --keep
found, minimised) are left alone. The real files (portable PDBs, assemblies, descriptor JSON) are
named in tests/fuzz/CMakeLists.txt.
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from corecore import NT_FILE, PAGE, core_bytes, note, nt_file, prstatus  # noqa: E402


def kept(f, real):
    """Files of a corpus directory this run does not own: reproducers of fixed bugs (regress_<slug>),
    the minimised inputs scripts/fuzz --keep found (40 hex digits), and without --real the seeds
    taken from real processes (real_*); with --real, only those."""
    if real:
        return not f.startswith("real_")
    return f.startswith(("regress_", "real_")) or re.fullmatch(r"[0-9a-f]{40}", f) is not None


def write_dir(name, cases, real=False):
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not kept(f, real):
            os.unlink(os.path.join(d, f))
    for case, data in cases:
        with open(os.path.join(d, case), "wb") as f:
            f.write(bytes(data))
    print(f"{name}: {len(cases)} seeds")


# ---- signatures -------------------------------------------------------------------------------

METHOD, PROPERTY, FIELD, LOCALS, TYPESPEC, METHODSPEC = range(6)
PTR4, NO_NS, NO_VAR, NO_HANDLE, FAILING = 0x08, 0x10, 0x20, 0x40, 0x80  # the last three: no longer read


def signature_cases():
    m1 = [0x30, 0x02, 0x08, 0x01, 0x08, 0x0E, 0x1C, 0x15, 0x12, 0x05, 0x01, 0x13, 0x00, 0x1D, 0x1E, 0x01,
          0x10, 0x08, 0x14, 0x11, 0x08, 0x02, 0x00, 0x00, 0x0F, 0x03]
    good = [
        ("method_mixed", METHOD, m1),
        ("method_mixed_failing", METHOD | FAILING | NO_NS, m1),
        ("method_prims", METHOD, [0x00, 0x0F, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                                  0x0A, 0x0B, 0x0C, 0x0D, 0x18, 0x19, 0x16]),
        ("method_vararg_def", METHOD, [0x05, 0x01, 0x01, 0x08]),
        ("method_vararg_call", METHOD, [0x05, 0x02, 0x01, 0x08, 0x41, 0x0E]),
        ("method_generic", METHOD | NO_VAR, [0x10, 0x02, 0x01, 0x1E, 0x00, 0x1E, 0x01]),
        ("method_cmods_fnptr", METHOD, [0x00, 0x02, 0x20, 0x05, 0x08, 0x1B, 0x00, 0x01, 0x08, 0x0E, 0x14, 0x08,
                                        0x01, 0x00, 0x00]),
        ("property", PROPERTY, [0x28, 0x01, 0x08, 0x15, 0x12, 0x05, 0x01, 0x13, 0x00]),
        ("locals_pinned", LOCALS, [0x07, 0x03, 0x45, 0x10, 0x05, 0x16, 0x12, 0x05]),
        ("field_jagged", FIELD, [0x06, 0x1D, 0x1D, 0x13, 0x01]),
        ("typespec_generic", TYPESPEC, [0x15, 0x11, 0x05, 0x02, 0x08, 0x13, 0x00]),
        ("typespec_array_bounds", TYPESPEC, [0x14, 0x08, 0x03, 0x02, 0x04, 0x05, 0x02, 0x00, 0x7F]),
        ("methodspec", METHODSPEC, [0x0A, 0x02, 0x0E, 0x1C]),
        ("internal_handle", TYPESPEC, [0x21, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]),
        ("internal_handle_ptr4", TYPESPEC | PTR4 | FAILING, [0x21, 0x45, 0x33, 0x22, 0x11]),
        ("internal_handle_default", TYPESPEC | NO_HANDLE, [0x21, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]),
        ("cmod_internal", FIELD, [0x06, 0x22, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x08]),
    ]
    deep = [0x1D] * 199 + [0x08]
    bad = [
        ("bad_truncated", METHOD, [0x00, 0x02, 0x01, 0x08]),
        ("bad_compressed", METHOD, [0x00, 0x01, 0x01, 0x15, 0x12]),
        ("bad_huge_count", METHOD, [0x00, 0xDF, 0xFF, 0xFF, 0xFF, 0x01]),
        ("bad_element", METHOD, [0x00, 0x00, 0x42]),
        ("bad_token", FIELD, [0x06, 0x12, 0x03]),
        ("bad_not_field", FIELD, [0x00, 0x08]),
        ("bad_generic_no_args", TYPESPEC, [0x15, 0x12, 0x05, 0x00]),
        ("bad_rank0", TYPESPEC, [0x14, 0x08, 0x00, 0x00, 0x00]),
        ("bad_deep", TYPESPEC, deep),
        ("bad_two_sentinels", METHOD, [0x05, 0x02, 0x01, 0x41, 0x08, 0x41, 0x08]),
        ("bad_internal", TYPESPEC, [0x21, 0x01, 0x02]),
    ]
    return [(name, [sel] + blob) for name, sel, blob in good + bad]


# ---- unwind info ------------------------------------------------------------------------------

RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 = range(16)
(PUSH_NONVOL, ALLOC_LARGE, ALLOC_SMALL, SET_FPREG, SAVE_NONVOL, SAVE_NONVOL_FAR, EPILOG, SPARE,
 SAVE_XMM128, SAVE_XMM128_FAR, PUSH_MACHFRAME, SET_FPREG_LARGE) = range(12)
CHAININFO = 4
LOOKUP, FRAME, NO_END, TWICE, NO_FP, NO_SP = 1, 2, 4, 8, 16, 32
UNWIND_RVA = 0x1000


def code(off, op, info):
    return off | (op << 8) | (info << 12)


def uinfo(version, flags, prolog, frame_reg, frame_off, codes, chained=None):
    b = bytearray([version | ((flags | (CHAININFO if chained else 0)) << 3), prolog, len(codes),
                   frame_reg | (frame_off << 4)])
    for c in codes:
        b += struct.pack("<H", c & 0xFFFF)
    if chained:
        if len(codes) % 2:
            b += b"\0\0"
        b += struct.pack("<III", *chained)
    return bytes(b)


def hexcode(s):
    return bytes.fromhex(s.replace(" ", ""))


def unwind_case(flags, begin, end, ip_off, infos, code_bytes=b"", rsp_off=0x1000, seed=0, rbp_units=8):
    """infos: {offset from UNWIND_RVA: UNWIND_INFO bytes}; the first is at offset 0."""
    assert 0x100 <= begin <= 0x1FF and begin < end <= begin + 0x100 and ip_off < 0x100
    area = bytearray()
    for off, data in sorted(infos.items()):
        if len(area) < off:
            area += b"\0" * (off - len(area))
        area[off:off + len(data)] = data
    code_area = (code_bytes + b"\x90" * 64)[:64]
    header = bytes([flags, begin - 0x100, end - begin - 1, ip_off]) + struct.pack("<H", rsp_off) + \
        bytes([seed, rbp_units])
    return header + code_area + bytes(area)


def unwind_cases():
    f1 = [code(6, ALLOC_SMALL, 4), code(2, PUSH_NONVOL, RBX), code(1, PUSH_NONVOL, RBP)]
    f1_info = uinfo(1, 0, 6, 0, 0, f1)
    f2 = [code(10, SET_FPREG, 0), code(5, ALLOC_SMALL, 7), code(1, PUSH_NONVOL, RBP)]
    f2_info = uinfo(1, 0, 10, RBP, 2, f2)
    cases = []

    def add(name, *a, **k):
        cases.append((name, unwind_case(*a, **k)))

    add("push_alloc_small", 0, 0x100, 0x180, 0x20, {0: f1_info})
    add("push_alloc_small_frame", FRAME | TWICE, 0x100, 0x180, 0x20, {0: f1_info}, seed=1)
    add("push_alloc_small_no_sp", FRAME | NO_SP, 0x100, 0x180, 0x20, {0: f1_info}, seed=2)
    add("push_alloc_small_stack_end", 0, 0x100, 0x180, 0x20, {0: f1_info}, rsp_off=0x4000 - 0x30)
    for off in (0, 1, 2, 5, 6):
        add(f"prologue_offset_{off}", TWICE, 0x100, 0x180, off, {0: f1_info},
            code_bytes=hexcode("55 53 48 83 ec 28")[off:], seed=off)
    add("set_fpreg", 0, 0x100, 0x180, 0x30, {0: f2_info}, rbp_units=6)
    add("set_fpreg_prologue", FRAME | NO_FP, 0x100, 0x180, 5, {0: f2_info})
    add("set_fpreg_unknown_rbp", FRAME | NO_FP, 0x100, 0x180, 0x30, {0: f2_info})
    large = [code(12, SET_FPREG_LARGE, 0), 2, 0, code(5, ALLOC_SMALL, 1), code(1, PUSH_NONVOL, RBP)]
    add("set_fpreg_large", 0, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 12, RBP, 15, large)}, rbp_units=4)
    alloc = [code(14, ALLOC_LARGE, 1), 0x0100, 0x0000, code(7, ALLOC_LARGE, 0), 0x30]
    add("alloc_large", 0, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 14, 0, 0, alloc)})
    add("alloc_large_partly", 0, 0x100, 0x180, 10, {0: uinfo(1, 0, 14, 0, 0, alloc)})
    huge = [code(14, ALLOC_LARGE, 1), 0x0008, 0x0001, code(7, ALLOC_LARGE, 0), 0x30]
    add("alloc_large_past_stack", 0, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 14, 0, 0, huge)})
    save = [code(14, SAVE_NONVOL, R12), 3, code(9, SAVE_NONVOL_FAR, R13), 0x28, 0, code(4, ALLOC_SMALL, 7)]
    add("save_nonvol", TWICE, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 14, 0, 0, save)})
    add("save_nonvol_between", 0, 0x100, 0x180, 9, {0: uinfo(1, 0, 14, 0, 0, save)})
    save2 = [code(14, SAVE_NONVOL, RBX), 1, code(10, SET_FPREG, 0), code(5, ALLOC_SMALL, 5), code(1, PUSH_NONVOL, RBP)]
    add("save_nonvol_frame_reg", 0, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 14, RBP, 1, save2)}, rbp_units=2)
    add("save_nonvol_frame_reg_unknown", FRAME | NO_FP, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 14, RBP, 1, save2)})
    xmm = [code(16, SAVE_XMM128, 6), 2, code(10, SAVE_XMM128_FAR, 15), 0x30, 0, code(4, ALLOC_SMALL, 7)]
    add("save_xmm", 0, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 16, 0, 0, xmm)})
    for info in (0, 1):
        add(f"machine_frame_{info}", 0, 0x100, 0x180, 0x40, {0: uinfo(1, 0, 0, 0, 0, [code(0, PUSH_MACHFRAME, info)])})

    # Chained: the function's own entry at UNWIND_RVA chains to a primary entry 0x40 further.
    primary = (0x100, 0x180, UNWIND_RVA + 0x40)
    add("chained", 0, 0x1C0, 0x1F0, 0x10,
        {0: uinfo(1, 0, 4, 0, 0, [code(4, ALLOC_SMALL, 1)], primary), 0x40: f1_info})
    add("chained_no_codes", LOOKUP, 0x1C0, 0x1F0, 0x10, {0: uinfo(1, 0, 0, 0, 0, [], primary), 0x40: f1_info})
    add("chained_loop", 0, 0x1C0, 0x1F0, 0x10, {0: uinfo(1, 0, 0, 0, 0, [], (0x1C0, 0x1F0, UNWIND_RVA))})
    add("chained_outside", 0, 0x1C0, 0x1F0, 0x10, {0: uinfo(1, 0, 0, 0, 0, [], (0x100, 0x180, 0x7000))})
    add("chained_outside_unchecked", NO_END, 0x1C0, 0x1F0, 0x10, {0: uinfo(1, 0, 0, 0, 0, [], (0x100, 0x180, 0x7000))})

    # Version 1 epilogs recognised by their code (and code that is not one).
    epilogs = ["48 83 c4 28 5b 5d c3", "48 83 c4 f8 5d c3", "48 81 c4 10 00 00 00 5b c3", "5b 5d c3",
               "41 5c 5d c3", "c3", "f3 c3", "f2 c3", "c2 08 00", "5d e9 00 10 00 00", "5d eb 80",
               "5d ff 25 00 00 00 00", "5d 48 ff e0", "5d eb d0", "5d e9 00 00 00 00 90", "5d 90 c3",
               "48 83 c5 28 c3", "ff e0", "e9 bb ff ff ff", "e9 bb 04 00 00", "e9 bb 05 00 00",
               "5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b 5b c3"]
    for i, e in enumerate(epilogs):
        add(f"epilog_v1_{i:02d}", LOOKUP if i % 2 else 0, 0x100, 0x180, 0x40, {0: f1_info}, code_bytes=hexcode(e),
            seed=i)
    add("epilog_v1_lea", 0, 0x100, 0x180, 0x60, {0: f2_info}, code_bytes=hexcode("48 8d 65 10 5d c3"), rbp_units=4)
    add("epilog_v1_lea32", 0, 0x100, 0x180, 0x60, {0: f2_info}, code_bytes=hexcode("48 8d a5 10 00 00 00 5d c3"),
        rbp_units=4)
    add("epilog_v1_lea_unknown_rbp", FRAME | NO_FP, 0x100, 0x180, 0x60, {0: f2_info},
        code_bytes=hexcode("48 8d 65 10 5d c3"))

    # Version 2 epilogs described by UWOP_EPILOG.
    v2 = uinfo(2, 0, 6, 0, 0, [code(3, EPILOG, 1), code(0x10, EPILOG, 0), code(6, ALLOC_SMALL, 4),
                               code(2, PUSH_NONVOL, RBX), code(1, PUSH_NONVOL, RBP)])
    for off in (0x3D, 0x3E, 0x3F, 0x31, 0x20):
        add(f"epilog_v2_{off:02x}", 0, 0x100, 0x140, off, {0: v2})
    v2m = uinfo(2, 0, 4, 0, 0, [code(2, EPILOG, 1), 0, code(2, PUSH_NONVOL, R12), code(0, PUSH_MACHFRAME, 0)])
    add("epilog_v2_machine_frame", 0, 0x100, 0x140, 0x3E, {0: v2m})
    v2chained = uinfo(2, 0, 0, 0, 0, [code(3, EPILOG, 1), 0], primary)
    for off in (0x2D, 0x2F):
        add(f"epilog_v2_chained_{off:02x}", 0, 0x1C0, 0x1F0, off, {0: v2chained, 0x40: f1_info})
    # A jump from a cold part to its own primary part (not a tail call), and to another function.
    cold = uinfo(1, 0, 0, 0, 0, [], primary)
    # (the lookup's function at 0x100 has its UNWIND_INFO at +0x20, the one at 0x500 at +0xA0)
    add("epilog_v1_cold_jmp_home", LOOKUP, 0x1C0, 0x1F0, 0x10, {0: cold, 0x20: cold, 0x40: f1_info},
        code_bytes=hexcode("5d e9 00 00 00 00")[:2] + struct.pack("<i", 0x120 - (0x1D0 + 6)))
    add("epilog_v1_cold_jmp_away", LOOKUP, 0x1C0, 0x1F0, 0x10, {0: cold, 0x40: f1_info, 0xA0: f1_info},
        code_bytes=hexcode("5d e9")[:2] + struct.pack("<i", 0x500 - (0x1D0 + 6)))
    v2bad = uinfo(2, 0, 4, 0, 0, [code(2, EPILOG, 1), 0, code(2, PUSH_NONVOL, R12), code(1, ALLOC_SMALL, 3)])
    add("epilog_v2_alloc_after_pops", 0, 0x100, 0x140, 0x3F, {0: v2bad})

    # Malformed UNWIND_INFO.
    bad = [
        (3, 0, 0, 0, []), (0, 0, 0, 0, []), (1, 4, 0, 0, [code(4, ALLOC_LARGE, 0)]),
        (1, 4, 0, 0, [code(4, PUSH_NONVOL, RBX), code(4, SAVE_NONVOL_FAR, RBX)]),
        (1, 4, 0, 0, [code(4, SPARE, 0)]), (1, 4, 0, 0, [code(4, 12, 0)]),
        (1, 4, 0, 0, [code(4, ALLOC_LARGE, 2), 1, 0]), (1, 4, 0, 0, [code(4, SET_FPREG, 0)]),
        (1, 4, RBP, 3, [code(4, SET_FPREG_LARGE, 0), 1, 0]),
        (1, 4, RBP, 15, [code(4, SET_FPREG_LARGE, 0), 0, 0x1000]),
        (1, 4, 0, 0, [code(4, EPILOG, 1), 0]),
        (1, 4, RBP, 15, [code(4, SET_FPREG, 0), code(4, SET_FPREG_LARGE, 0), 1, 0]),
        (1, 4, 0, 0, [code(4, PUSH_MACHFRAME, 2)]),
    ]
    for i, (version, prolog, reg, off, codes) in enumerate(bad):
        add(f"corrupt_{i:02d}", 0, 0x100, 0x180, 0x40, {0: uinfo(version, 0, prolog, reg, off, codes)})
    add("ip_outside", 0, 0x100, 0x180, 0x90, {0: f1_info})
    add("truncated_codes", 0, 0x100, 0x180, 0x20, {0: uinfo(1, 0, 6, 0, 0, f1)[:5]})
    return cases


# ---- uncompressed metadata --------------------------------------------------------------------

def metadata_of(pe):
    lfanew = struct.unpack_from("<I", pe, 0x3C)[0]
    nsec, optsz = struct.unpack_from("<HH", pe, lfanew + 6)[0], struct.unpack_from("<H", pe, lfanew + 20)[0]
    opt = lfanew + 24
    dirs = opt + (96 if struct.unpack_from("<H", pe, opt)[0] == 0x10B else 112)
    cli_rva = struct.unpack_from("<I", pe, dirs + 14 * 8)[0]

    def off(rva):
        for i in range(nsec):
            va, raw_size, raw_ptr = struct.unpack_from("<III", pe, opt + optsz + i * 40 + 12)
            if va <= rva < va + raw_size:
                return raw_ptr + rva - va
        raise ValueError(hex(rva))

    md_rva, md_size = struct.unpack_from("<II", pe, off(cli_rva) + 8)
    return bytearray(pe[off(md_rva):off(md_rva) + md_size])


def uncompressed(md):
    """#~ -> #- with FieldPtr, MethodPtr and ParamPtr tables (identity maps) added."""
    vlen = struct.unpack_from("<I", md, 12)[0]
    nstreams_at = 16 + vlen + 2
    nstreams = struct.unpack_from("<H", md, nstreams_at)[0]
    headers, p = [], nstreams_at + 2
    for _ in range(nstreams):
        s_off, s_size = struct.unpack_from("<II", md, p)
        name_end = md.index(b"\0", p + 8)
        headers.append((p, s_off, s_size, bytes(md[p + 8:name_end])))
        p += 8 + ((name_end - (p + 8) + 1 + 3) & ~3)
    tab = next(h for h in headers if h[3] == b"#~")
    t_hdr, t_off, t_size, _ = tab
    t = md[t_off:t_off + t_size]
    heap_sizes = t[6]
    valid, sorted_ = struct.unpack_from("<QQ", t, 8)
    present = [i for i in range(64) if valid >> i & 1]
    rows = dict(zip(present, struct.unpack_from(f"<{len(present)}I", t, 24)))
    data_at = 24 + 4 * len(present) + (4 if heap_sizes & 0x20 else 0)

    # Row sizes: only what is needed to find where each table's rows start.
    def tab_w(table):
        return 2 if rows.get(table, 0) < 65536 else 4

    def heap_w(bit):
        return 4 if heap_sizes & bit else 2

    def coded_w(bits, tables):
        return 2 if max(rows.get(x, 0) for x in tables) < (1 << (16 - bits)) else 4

    s, g, b = heap_w(1), heap_w(2), heap_w(4)
    tdor = coded_w(2, [2, 1, 0x1B])
    rscope = coded_w(2, [0, 0x1A, 0x23, 1])
    row_size = {0x00: 2 + s + 3 * g, 0x01: rscope + 2 * s, 0x02: 4 + 2 * s + tdor + tab_w(4) + tab_w(6),
                0x04: 2 + s + b, 0x06: 4 + 2 + 2 + s + b + tab_w(8)}
    offsets, at = {}, data_at
    for i in present:
        offsets[i] = at
        if i >= 0x08:
            break
        at += rows[i] * row_size[i]
    new_tables = {0x03: 0x04, 0x05: 0x06, 0x07: 0x08}  # FieldPtr, MethodPtr, ParamPtr
    inserts = []
    for ptr, target in new_tables.items():
        n = rows.get(target, 0)
        if not n:
            continue
        before = min(i for i in present if i > ptr)
        inserts.append((offsets[before], b"".join(struct.pack("<H" if tab_w(target) == 2 else "<I", r)
                                                  for r in range(1, n + 1))))
        valid |= 1 << ptr
        rows[ptr] = n
    present = [i for i in range(64) if valid >> i & 1]
    body = bytearray(t[data_at:])
    for at, data in sorted(inserts, reverse=True):
        body[at - data_at:at - data_at] = data
    new_t = bytearray(t[:8]) + struct.pack("<QQ", valid, sorted_) + \
        struct.pack(f"<{len(present)}I", *[rows[i] for i in present]) + \
        (t[24 + 4 * (len(present) - len(inserts)):data_at] if heap_sizes & 0x20 else b"") + body
    while len(new_t) % 4:
        new_t += b"\0"
    delta = len(new_t) - t_size
    out = bytearray(md[:t_off]) + new_t + md[t_off + t_size:]
    for hp, s_off, s_size, name in headers:
        if hp == t_hdr:
            struct.pack_into("<II", out, hp, s_off, len(new_t))
            out[hp + 8:hp + 11] = b"#-\0"
        elif s_off > t_off:
            struct.pack_into("<I", out, hp, s_off + delta)
    return out


# ---- cores ------------------------------------------------------------------------------------

def elf_page(base_tag):
    """A page that starts like a loaded ELF image (no dynamic section: nothing exports anything)."""
    b = bytearray(PAGE)
    b[:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<HHI", b, 16, 3, 62, 1)
    b[64:64 + len(base_tag)] = base_tag
    return bytes(b)


def core_cases():
    regs = [0x1000 * i + 8 for i in range(27)]
    regs[19] = 0x7FF000 + 0x800  # rsp inside the stack segment
    lib = "/nonexistent/asyncdac-fuzz/libcoreclr.so"
    files = nt_file([(0x10000, 0x12000, 0, lib), (0x12000, 0x13000, 5, lib), (0x20000, 0x21000, 0, "/nonexistent/other")])
    notes = [prstatus(100, regs), prstatus(101, regs[::-1]), files, note(3, b"\0" * 136)]  # NT_PRPSINFO
    stack = bytes((i * 13) & 0xFF for i in range(PAGE))
    loads = [(0x10000, 0x2000, elf_page(b"lib") + b"\x11" * PAGE), (0x20000, 0x1000, elf_page(b"other")),
             (0x7FF000, 0x1000, stack)]
    cases = [
        ("threads_files", core_bytes(loads, notes)),
        ("memsz_past_filesz", core_bytes([(0x10000, 0x3000, elf_page(b"lib")), (0x7FF000, 0x2000, stack)], notes)),
        ("overlapping", core_bytes([(0x10000, 0x3000, b"\x22" * 0x3000), (0x11000, 0x1000, b"\x33" * PAGE)], notes)),
        ("no_notes", core_bytes(loads, [])),
        ("nt_file_twice", core_bytes(loads, notes + [nt_file([(0x30000, 0x31000, 0, "/nonexistent/late")])])),
    ]
    # PN_XNUM: e_phnum 0xffff, the count in section header 0's sh_info.
    body = bytearray(core_bytes(loads, notes))
    phnum = struct.unpack_from("<H", body, 56)[0]
    shoff = len(body)
    body += struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, phnum, 0, 0)
    struct.pack_into("<Q", body, 40, shoff)
    struct.pack_into("<HHHH", body, 56, 0xFFFF, 64, 1, 0)
    cases.append(("pn_xnum", bytes(body)))
    return cases


# ---- from real processes (--real) ------------------------------------------------------------

def run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"make_corpus: {' '.join(argv)} failed: {r.stderr.strip()}")
    return r.stdout


def real_core(build, tmp):
    """gcore of the synthetic target, anonymous memory only (coredump_filter 1)."""
    p = subprocess.Popen([os.path.join(build, "targets", "synthetic", "synthetic-target"), "spin"],
                         stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout.readline().split()[:1] != ["READY"]:
            sys.exit("make_corpus: synthetic-target did not start")
        with open(f"/proc/{p.pid}/coredump_filter", "w") as f:
            f.write("0x1")
        run(["gcore", "-o", os.path.join(tmp, "st"), str(p.pid)])
        with open(os.path.join(tmp, f"st.{p.pid}"), "rb") as f:
            return f.read()
    finally:
        p.kill()
        p.wait()


def sample_core(scenario, tmp, mode=None, env=None):
    """A createdump core of a .NET 11 sample (Debug), and the READY line's facts; env: more environment."""
    argv = [os.path.join(ROOT, "scripts", "run-sample"), scenario] + (["--mode", mode] if mode else [])
    ready, pid = run(argv, env=dict(os.environ, **env) if env else None).splitlines()[-2:]
    try:
        time.sleep(1)  # the sample prints READY just before it parks
        core = os.path.join(tmp, f"{scenario}{'.env' if env else ''}.core")
        run([os.path.join(ROOT, "scripts", "make-core"), pid, core])
    finally:
        subprocess.run(["kill", pid])
    return core, dict(kv.split("=", 1) for kv in ready.split()[1:] if "=" in kv)


def image(build, core, commands, raw=False):
    """The memory image fuzz-make-image records while commands ([[word, ...], ...]) run on core."""
    out = os.path.join(os.path.dirname(core), "image")
    argv = [os.path.join(build, "bin", "fuzz-make-image")] + (["--bytes"] if raw else []) + [core, out]
    for i, c in enumerate(commands):
        argv += (["--"] if i else []) + c
    env = dict(os.environ, ASYNCDAC_DOTNET_DIR=os.environ.get("ASYNCDAC_DOTNET_DIR", os.path.join(ROOT, "build", "dotnet")))
    run(argv, env=env)
    with open(out, "rb") as f:
        return f.read()


def task_of(build, core, n=0):
    ps = json.loads(run([os.path.join(build, "bin", "asyncdac"), "ps", core, "--json"]))
    return ps["ps"]["chains"][n]["task"]["address"]


def one_of_type(build, core, name):
    """The address of the one object of type AsyncdacSamples.<name>."""
    d = json.loads(run([os.path.join(build, "bin", "asyncdac"), "dumpheap", core, "--type", name, "--json"]))
    mts = {s["mt"] for s in d["dumpheap"]["statistics"] if s["name"] == "AsyncdacSamples." + name}
    return [o["address"] for o in d["dumpheap"]["objects"] if o["mt"] in mts][0]


def real_starved(build, tmp):
    """A starved pool (the starved sample's --mode classic): its global and local queues (a runtime-async
    task, a classic box, callbacks, a Task.Run) and its threads, as `report`, `threadpool --items` and
    `clrthreads` read them (fuzz_chain runs the last two with each image's `report`)."""
    starved, _ = sample_core("starved", tmp, mode="classic")
    return ("real_starved_report", image(build, starved, [["report"], ["threadpool", "--items"], ["clrthreads"]]))


def real_cases(build):
    tmp = tempfile.mkdtemp(prefix="asyncdac-corpus-")
    write_dir("core", [("real_synthetic_gcore", real_core(build, tmp))], real=True)
    nested, _ = sample_core("nested", tmp)
    task = task_of(build, nested)
    write_dir("discovery", [("real_nested_runtime", image(build, nested, [["runtime", "--verbose"]], raw=True))],
              real=True)
    roots, _ = sample_core("roots", tmp)
    value, fin, strong = (one_of_type(build, roots, n) for n in ("RootsValue", "RootsFinalizable", "RootsStrong"))
    heap = [("real_nested_dumpheap", image(build, nested, [["dumpheap", "--stat"], ["dumpheap"]])),
            ("real_roots_gcroot", image(build, roots, [["gcroot", value], ["gcroot", fin, "--json"],
                                                       ["gcroot", strong]]))]
    # server GC: a handle table per CPU, each heap's own finalization queue
    server, _ = sample_core("roots", tmp, env={"DOTNET_gcServer": "1"})
    value, fin = (one_of_type(build, server, n) for n in ("RootsValue", "RootsFinalizable"))
    heap.append(("real_roots_server_gcroot", image(build, server, [["gcroot", value], ["gcroot", fin, "--json"]])))
    locks, _ = sample_core("locks", tmp)
    heap.append(("real_locks_locks", image(build, locks, [["locks"]])))
    write_dir("heap", heap, real=True)
    chains = [("real_nested_bt", image(build, nested, [["bt", "--address", task, "--locals", "--json"],
                                                       ["frame", "variable", "--address", task, "--frame", "1"],
                                                       ["frame", "info", "--address", task, "--frame", "2"]]))]
    shapes, _ = sample_core("shapes", tmp)
    chains.append(("real_shapes_ps", image(build, shapes, [["ps", "--locals", "--json"]])))
    running, ready = sample_core("running", tmp)
    chains.append(("real_running_bt", image(build, running, [["bt", "--thread", ready["tid"], "--locals"]])))
    # an await cycle, and sync-over-async under a lock (a running chain, a synchronous wait, a Monitor)
    deadlock, _ = sample_core("deadlock", tmp)
    chains.append(("real_deadlock_ps", image(build, deadlock, [["ps", "--json"], ["report"]])))
    chains.append(real_starved(build, tmp))
    write_dir("chain", chains, real=True)
    subprocess.run(["rm", "-rf", tmp])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", metavar="BUILD", help="also the seeds from real processes, with this build")
    args = ap.parse_args()
    write_dir("signature", signature_cases())
    write_dir("managed_unwind", unwind_cases())
    with open(os.path.join(ROOT, "tests/data/pdb/nested/nested.dll"), "rb") as f:
        md = metadata_of(f.read())
    write_dir("ecma_metadata", [("nested_uncompressed", uncompressed(md))])
    write_dir("core", core_cases())
    if args.real:
        real_cases(os.path.abspath(args.real))


if __name__ == "__main__":
    main()
