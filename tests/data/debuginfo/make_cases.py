#!/usr/bin/env python3
"""Writes the hand-built debug-info cases of this directory (all but net11_*) and corpus/.

An independent encoder: it follows the runtime's writer (vm/debuginfostore.cpp, inc/nibblestream.h:
NibbleWriter::WriteEncodedU32/I32, CompressBoundaries' packed bits, DoNativeVarInfo, the async
chunk) and prints, for a valid case, the dump it expects from adac_debuginfo_dump, computed from
its own model rather than by decoding. Invalid cases get the one-line error asyncdac must give.

    python3 tests/data/debuginfo/make_cases.py      # rewrites the hand-built case directories
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
IL_BIAS = -3  # MAX_MAPPING_VALUE
PROLOG, NO_MAPPING, EPILOG = -2, -1, -3
SPECIAL_VARS = {-1: "VARARGS_HND", -2: "RETBUF", -3: "TYPECTXT", -4: "UNKNOWN", -5: "CALL_RETURN"}
VLT = ["REG", "REG_BYREF", "REG_FP", "STK", "STK_BYREF", "REG_REG", "REG_STK", "STK_REG", "STK2", "FPSTK",
       "FIXED_VA", "COUNT", "INVALID"]


class Nibbles:
    """NibbleWriter: low nibble first; Flush pads a pending nibble with a zero high nibble."""

    def __init__(self):
        self.n = []

    def nib(self, v):
        self.n.append(v & 0xF)

    def u32(self, v):
        v &= 0xFFFFFFFF
        i = 0
        while (v >> i) > 7:
            i += 3
        while i > 0:
            self.nib(((v >> i) & 7) | 8)
            i -= 3
        self.nib(v & 7)

    def i32(self, x):
        self.u32(((-x) << 1) | 1 if x < 0 else x << 1)

    def raw(self, nibbles):
        for v in nibbles:
            self.nib(v)

    def bytes(self):
        n = self.n + ([0] if len(self.n) % 2 else [])
        return bytes(n[i] | (n[i + 1] << 4) for i in range(0, len(n), 2))


def bits_for(v):
    return max(1, v.bit_length())


def enc_bounds(bounds, src_bits):
    """bounds: [(native, il, flags)] with flags a set of CALL/STACK/ASYNC."""
    w = Nibbles()
    w.u32(len(bounds))
    deltas, prev = [], 0
    for nat, _, _ in bounds:
        deltas.append(nat - prev)
        prev = nat
    nb = bits_for(max(deltas))
    ib = bits_for(max((il - IL_BIAS) & 0xFFFFFFFF for _, il, _ in bounds))
    w.u32(nb - 1)
    w.u32(ib - 1)
    out = bytearray(w.bytes())
    acc, nacc = 0, 0
    for (nat, il, fl), d in zip(bounds, deltas):
        if src_bits == 3:
            s = (1 if "CALL" in fl else 0) | (2 if "STACK" in fl else 0) | (4 if "ASYNC" in fl else 0)
        else:
            s = {frozenset(): 0, frozenset({"CALL"}): 1, frozenset({"STACK"}): 2, frozenset({"CALL", "STACK"}): 3}[frozenset(fl)]
        e = s | (d << src_bits) | (((il - IL_BIAS) & 0xFFFFFFFF) << (src_bits + nb))
        acc |= e << nacc
        nacc += src_bits + nb + ib
    nbytes = (nacc + 7) // 8
    out += acc.to_bytes(nbytes, "little") if nbytes else b""
    return bytes(out)


def enc_varloc(w, vlt, loc, x86):
    def stk(v):
        w.i32(v // 4 if x86 else v)
    k = VLT[vlt]
    if k in ("REG", "REG_BYREF", "REG_FP", "FPSTK", "FIXED_VA"):
        w.u32(loc[0])
    elif k in ("STK", "STK_BYREF", "STK2"):
        w.u32(loc[0]); stk(loc[1])
    elif k == "REG_REG":
        w.u32(loc[0]); w.u32(loc[1])
    elif k == "REG_STK":
        w.u32(loc[0]); w.u32(loc[1]); stk(loc[2])
    elif k == "STK_REG":
        stk(loc[0]); w.u32(loc[1]); w.u32(loc[2])


def enc_vars(vars_, net11, x86=False):
    """vars: [(varnum, start, end, vlt, loc, call_il)]"""
    w = Nibbles()
    w.u32(len(vars_))
    bias = -6 if net11 else -4
    for num, start, end, vlt, loc, call_il in vars_:
        if net11:
            w.u32(num - bias); w.u32(start)
            w.u32(call_il if num == -5 else end - start)
        else:
            w.u32(start); w.u32(end - start); w.u32(num - bias)
        w.u32(vlt)
        enc_varloc(w, vlt, loc, x86)
    return w.bytes()


def enc_async(points):
    """points: [(native, [(varnum, offset)])]"""
    w = Nibbles()
    w.u32(len(points))
    w.u32(sum(len(v) for _, v in points))
    prev = 0
    for nat, vs in points:
        w.i32(nat - prev)
        prev = nat
        w.u32(len(vs))
    for _, vs in points:
        for num, off in vs:
            w.u32(num + 6); w.u32(off)
    return w.bytes()


def header11(sizes, fat):
    w = Nibbles()
    if fat:
        w.u32(0)
        for s in sizes:
            w.u32(s)
    else:
        w.u32(sizes[0]); w.u32(sizes[1])
    return w.bytes()


# ---------------------------------------------------------------- expected dumps (from the model)

def il_name(il):
    return {PROLOG: "PROLOG", NO_MAPPING: "NO_MAPPING", EPILOG: "EPILOG"}.get(il, "0x%04x" % il)


def var_name(v):
    return SPECIAL_VARS.get(v, str(v))


def src_name(fl):
    parts = [n for k, n in (("CALL", "CALL_INSTRUCTION"), ("STACK", "STACK_EMPTY"), ("ASYNC", "ASYNC")) if k in fl]
    return "|".join(parts) or "-"


def loc_text(vlt, loc):
    k = VLT[vlt]
    if k in ("REG", "REG_BYREF", "REG_FP"):
        return "%s reg=%d" % (k, loc[0])
    if k in ("STK", "STK_BYREF", "STK2"):
        return "%s base=%d off=%d" % (k, loc[0], loc[1])
    if k == "REG_REG":
        return "%s reg1=%d reg2=%d" % (k, loc[0], loc[1])
    if k == "REG_STK":
        return "%s reg=%d base=%d off=%d" % (k, loc[0], loc[1], loc[2])
    if k == "STK_REG":
        return "%s off=%d base=%d reg=%d" % (k, loc[0], loc[1], loc[2])
    if k == "FPSTK":
        return "FPSTK fpreg=%d" % loc[0]
    if k == "FIXED_VA":
        return "FIXED_VA offset=%d" % loc[0]
    return k


def dump(header_line, bounds, vars_, points):
    out = [header_line]
    out.append("bounds %d" % len(bounds))
    for nat, il, fl in bounds:
        out.append("  native=0x%04x il=%s source=%s" % (nat, il_name(il), src_name(fl)))
    out.append("vars %d" % len(vars_))
    for num, start, end, vlt, loc, call_il in vars_:
        if num == -5:
            end = start + 1
        extra = "call_il=0x%04x " % call_il if num == -5 else ""
        out.append("  var=%s [0x%04x,0x%04x) %s%s" % (var_name(num), start, end, extra, loc_text(vlt, loc)))
    out.append("async points=%d vars=%d" % (len(points), sum(len(v) for _, v in points)))
    for i, (nat, vs) in enumerate(points):
        out.append("  sp %d native=0x%04x vars=%d" % (i, nat, len(vs)))
        for num, off in vs:
            out.append("    var=%s offset=0x%x" % (var_name(num), off))
    return "\n".join(out) + "\n"


def hexdump(b, comment):
    lines = ["# " + c for c in comment.split("\n")]
    for i in range(0, len(b), 32):
        lines.append(b[i:i + 32].hex(" "))
    return "\n".join(lines) + "\n"


CASES = {}


def case(name, blob, comment, fmt="net11", expected=None, error=None):
    CASES[name] = (blob, comment, fmt, expected, error)


def net11_blob(bounds=None, vars_=None, uninstr=b"", patch=b"", rich=b"", points=None, fat=True, x86=False,
               trailing=b""):
    # A thin header cannot describe a blob without bounds: its first U32 would be 0, the fat marker.
    fat = fat or not bounds
    cb = enc_bounds(bounds, 3) if bounds else b""
    cv = enc_vars(vars_, True, x86) if vars_ else b""
    ca = enc_async(points) if points else b""
    sizes = [len(cb), len(cv), len(uninstr), len(patch), len(rich), len(ca)]
    h = header11(sizes, fat)
    blob = h + cb + cv + uninstr + patch + rich + ca
    line = ("header %s bounds=%d vars=%d uninstrumented=%d patchpoint=%d rich=%d async=%d header_bytes=%d total=%d"
            % ("fat" if fat else "thin", *sizes, len(h), len(blob)))
    return blob + trailing, line


# ---------------------------------------------------------------- valid .NET 11 cases

B1 = [(0x00, PROLOG, {"STACK"}), (0x12, 0x0, {"STACK"}), (0x15, 0x1, set()), (0x20, 0x6, {"CALL"}),
      (0x20, 0x6, {"CALL", "STACK"}), (0x31, 0x9, {"ASYNC"}), (0x31, 0x9, {"ASYNC", "STACK", "CALL"}),
      (0x40, NO_MAPPING, set()), (0x52, EPILOG, {"STACK"})]
V1 = [(0, 0x0, 0x52, 3, [5, -16], 0), (1, 0x12, 0x40, 0, [3], 0), (-3, 0x0, 0x52, 4, [4, 24], 0),
      (2, 0x15, 0x31, 2, [17], 0)]
blob, line = net11_blob(B1, V1, fat=False)
case("thin_bounds_vars", blob, "thin header (only bounds and vars), every source flag combination, special IL offsets",
     expected=dump(line, B1, V1, []))

V_ALL = [(0, 0x10, 0x20, 0, [0], 0), (1, 0x10, 0x20, 1, [7], 0), (2, 0x10, 0x20, 2, [16], 0),
         (3, 0x10, 0x20, 3, [5, -8], 0), (4, 0x10, 0x20, 4, [4, 1024], 0), (5, 0x10, 0x20, 5, [0, 2], 0),
         (6, 0x10, 0x20, 6, [3, 5, -32], 0), (7, 0x10, 0x20, 7, [-40, 5, 6], 0), (8, 0x10, 0x20, 8, [4, 48], 0),
         (9, 0x10, 0x20, 9, [1], 0), (10, 0x10, 0x20, 10, [24], 0), (11, 0x10, 0x20, 11, [], 0),
         (12, 0x10, 0x20, 12, [], 0), (-5, 0x33, None, 0, [0], 0x2a), (-1, 0, 0x1234567, 3, [5, -70000], 0),
         (-2, 0, 8, 0, [6], 0), (-4, 0, 8, 0, [2], 0), (40000, 0x100, 0x200, 3, [4, 2147483647], 0)]
V_ALL = [(n, s, e if e is not None else s + 1, t, l, c) for n, s, e, t, l, c in V_ALL]
blob, line = net11_blob(None, V_ALL, fat=False)
case("vars_every_location", blob, "every VarLocType, CALL_RETURN_ILNUM with its call IL offset (VarNumber-first\n"
     "encoding, MAX_ILNUM = -6), special var numbers, multi-nibble values", expected=dump(line, [], V_ALL, []))

PTS = [(0x140, [(0, 0x20), (3, 0x28), (-3, 0x30)]), (0x90, []), (0x200, [(4, 0x38), (1, 0x20)])]
UNINSTR = enc_bounds([(0x0, 0x0, set()), (0x10, 0x4, {"STACK"})], 3)
PATCH = bytes(range(56))
RICH = bytes([0x12, 0x34, 0x56])
B2 = [(0x0, PROLOG, {"STACK"}), (0x90, 0x10, {"ASYNC"}), (0x140, 0x22, {"ASYNC"}), (0x200, 0x31, {"ASYNC"})]
blob, line = net11_blob(B2, V1, UNINSTR, PATCH, RICH, PTS)
case("fat_all_chunks", blob, "fat header with all six chunks: uninstrumented bounds, patchpoint and rich info are\n"
     "skipped; three suspension points with a backwards DiagnosticNativeOffset delta and an empty one",
     expected=dump(line, B2, V1, PTS))

PTS2 = [(0x4cb, [(0, 0x38), (-3, 0x70)])]
blob, line = net11_blob(None, None, points=PTS2)
case("fat_async_only", blob, "fat header whose only chunk is the async info", expected=dump(line, [], [], PTS2))

blob, line = net11_blob(None, None)
case("fat_empty", blob, "fat header with every size 0 (a thin header cannot say \"no bounds\": its 0 is the fat marker)",
     expected=dump(line, [], [], []))

B64 = [(0x0, 0x0, set()), (0xFFFFFFFF, 0x1FFFFFFF - 3, {"ASYNC", "CALL"})]
blob, line = net11_blob(B64, None, fat=False)
case("bounds_64_bit_entries", blob, "3 + 32 + 29 = 64 bits per bounds entry: the widest the runtime's reader allows",
     expected=dump(line, B64, [], []))

V86 = [(0, 0, 0x10, 3, [5, -16], 0), (1, 0, 0x10, 6, [0, 4, 8], 0), (2, 0, 0x10, 7, [-4, 5, 1], 0)]
blob, line = net11_blob(None, V86, fat=False, x86=True)
case("x86_stack_offsets", blob, "x86: stack offsets are stored divided by 4", fmt="net11 x86",
     expected=dump(line, [], V86, []))

blob, line = net11_blob(B1[:3], None, fat=False, trailing=bytes([0xde, 0xad, 0xbe, 0xef]))
case("trailing_bytes", blob, "bytes after the last chunk are not part of the blob", expected=dump(line, B1[:3], [], []))

# ---------------------------------------------------------------- valid .NET 10 cases


def net10_blob(bounds, vars_, uninstr=None, flag=None, patch_locals=None, rich=None):
    cb = enc_bounds(bounds, 2) if bounds else b""
    cu = enc_bounds(uninstr, 2) if uninstr else b""
    cv = enc_vars(vars_, False) if vars_ else b""
    pre = b""
    pp = rr = 0
    if flag is not None:
        pre = bytes([flag])
        if flag & 1:
            p = bytearray(40 + 4 * patch_locals)
            p[16:20] = patch_locals.to_bytes(4, "little")
            pre += bytes(p)
            pp = len(p)
        if flag & 2:
            pre += len(rich).to_bytes(4, "little") + rich
            rr = len(rich)
    w = Nibbles()
    if cu:
        w.u32(0xFFFFFFFF); w.u32(len(cb)); w.u32(len(cu))
    else:
        w.u32(len(cb))
    w.u32(len(cv))
    h = pre + w.bytes()
    blob = h + cb + cu + cv
    if flag is None:
        line = "header thin bounds=%d vars=%d uninstrumented=%d patchpoint=0 rich=0 async=0" % (len(cb), len(cv), len(cu))
    else:
        line = ("header flag_byte=0x%02x patchpoint=%d rich=%d bounds=%d uninstrumented=%d vars=%d"
                % (flag, pp, rr, len(cb), len(cu), len(cv)))
    return blob, line + " header_bytes=%d total=%d" % (len(h), len(blob))


B10 = [(0x0, PROLOG, {"STACK"}), (0x8, 0x0, {"STACK"}), (0x19, 0x5, {"CALL"}), (0x19, 0x5, {"CALL", "STACK"}),
       (0x2a, NO_MAPPING, set()), (0x30, EPILOG, {"STACK"})]
V10 = [(0, 0, 0x30, 3, [5, -8], 0), (-3, 0, 0x30, 0, [3], 0), (-4, 8, 0x10, 0, [7], 0), (1, 8, 0x2a, 5, [0, 2], 0)]
blob, line = net10_blob(B10, V10)
case("net10_no_flag_byte", blob, ".NET 10 without a flag byte (ReadyToRun): 2 enumerated source bits, vars as\n"
     "start, length, varNumber - MAX_ILNUM (-4)", fmt="net10", expected=dump(line, B10, V10, []))

blob, line = net10_blob(B10, V10, uninstr=B10[:2], flag=3, patch_locals=3, rich=bytes([1, 2, 3, 4, 5]))
case("net10_flag_patchpoint_rich", blob, ".NET 10 JIT code: flag byte 3 (PatchpointInfo with 3 locals, then u32 size +\n"
     "rich info), header with uninstrumented bounds (first U32 0xFFFFFFFF)", fmt="net10 flag_byte",
     expected=dump(line, B10, V10, []))

blob, line = net10_blob(B10[:2], None, flag=0)
case("net10_flag_zero", blob, ".NET 10 JIT code with an empty flag byte", fmt="net10 flag_byte",
     expected=dump(line, B10[:2], [], []))

# ---------------------------------------------------------------- corrupt cases

good, _ = net11_blob(B1, V1, fat=False)
w = Nibbles(); w.u32(0); w.u32(len(enc_vars(V1, True)))
case("err_thin_without_bounds", w.bytes() + enc_vars(V1, True), "a thin header with cbBounds 0 reads as a fat header\n"
     "(the runtime's own reader does the same): writers must use the fat form when there are no bounds",
     error="CORRUPT: debug info: header and chunks need 115 bytes, the blob has 20")
case("err_empty_blob", b"", "no bytes at all", error="CORRUPT: debug info header: truncated (0 bytes, need 40)")
case("err_header_truncated", bytes([0xa0, 0x4e]), "a fat header cut after its second size",
     error="CORRUPT: debug info header: truncated (2 bytes, need 40)")
case("err_header_overlong", bytes([0xff] * 8), "a header U32 of 16 continuation nibbles",
     error="CORRUPT: debug info header: value wider than 32 bits")
case("err_chunks_exceed_blob", good[:len(good) - 3], "the header promises 3 bytes more than there are",
     error="CORRUPT: debug info: header and chunks need %d bytes, the blob has %d" % (len(good), len(good) - 3))

def raw_chunk_case(name, chunk, which, comment, error, fmt="net11"):
    sizes = [0] * 6
    sizes[which] = len(chunk)
    case(name, header11(sizes, True) + chunk, comment, fmt=fmt, error=error)

w = Nibbles(); w.u32(5); w.u32(4); w.u32(3)
raw_chunk_case("err_bounds_truncated", w.bytes() + bytes(2), 0, "5 bounds entries of 3+5+4 bits in 2 bytes",
               "CORRUPT: debug info bounds chunk: 5 entries of 12 bits do not fit in its 4 bytes")
w = Nibbles(); w.u32(1); w.u32(31); w.u32(31)
raw_chunk_case("err_bounds_over_64_bits", w.bytes() + bytes(9), 0, "3 + 32 + 32 = 67 bits per entry",
               "CORRUPT: debug info bounds chunk: 67 bits per entry (more than 64)")
w = Nibbles(); w.u32(1); w.u32(40); w.u32(0)
raw_chunk_case("err_bounds_native_bits", w.bytes() + bytes(8), 0, "41 native delta bits",
               "CORRUPT: debug info bounds chunk: 41 native delta bits and 1 IL offset bits (at most 32 each)")
w = Nibbles(); w.u32(3); w.u32(0)
raw_chunk_case("err_bounds_count_truncated", w.bytes(), 0, "the chunk ends before the IL offset bit count",
               "CORRUPT: debug info bounds chunk: IL offset bit count: truncated (1 bytes)")
w = Nibbles(); w.u32(1000000); w.u32(3)
raw_chunk_case("err_vars_absurd_count", w.bytes() + bytes(6), 1, "a million vars in 10 bytes",
               "CORRUPT: debug info vars chunk: var count 1000000 does not fit in its 10 bytes")
w = Nibbles(); w.u32(1); w.u32(6); w.u32(0); w.u32(8); w.u32(3); w.u32(9)
raw_chunk_case("err_vars_truncated", w.bytes(), 1, "a VLT_STK var cut before its stack offset",
               "CORRUPT: debug info vars chunk: stack offset: truncated (4 bytes)")
w = Nibbles(); w.u32(1); w.u32(6); w.u32(0); w.u32(8); w.u32(13); w.u32(0)
raw_chunk_case("err_vars_unknown_location", w.bytes(), 1, "VarLocType 13 does not exist",
               "CORRUPT: debug info vars chunk: unknown VarLocType 13")
w = Nibbles(); w.u32(1); w.u32(6); w.u32(0xFFFFFFF0); w.u32(0x20); w.u32(0); w.u32(0)
raw_chunk_case("err_vars_end_overflow", w.bytes(), 1, "start + length wraps around 32 bits",
               "CORRUPT: debug info vars chunk: var 0: end offset overflows")
w = Nibbles(); w.u32(2); w.u32(1); w.i32(0x40); w.u32(1); w.i32(0x10); w.u32(1); w.u32(6); w.u32(0x20)
raw_chunk_case("err_async_count_mismatch", w.bytes(), 5, "two points with one var each, a total of one",
               "CORRUPT: debug info async chunk: suspension points hold 2 vars, the chunk header says 1")
w = Nibbles(); w.u32(1); w.u32(0); w.i32(-4); w.u32(0)
raw_chunk_case("err_async_negative_offset", w.bytes(), 5, "the first DiagnosticNativeOffset delta is negative",
               "CORRUPT: debug info async chunk: suspension point 0: native offset -4 out of range")
w = Nibbles(); w.u32(500000); w.u32(0)
raw_chunk_case("err_async_absurd_count", w.bytes() + bytes(4), 5, "half a million suspension points in 8 bytes",
               "CORRUPT: debug info async chunk: suspension point count 500000 does not fit in its 8 bytes")
w = Nibbles(); w.u32(1); w.u32(1); w.i32(0x10); w.u32(1); w.u32(66)
raw_chunk_case("err_async_vars_truncated", w.bytes(), 5, "the var list ends before the last offset",
               "CORRUPT: debug info async chunk: continuation var offset: truncated (4 bytes)")
case("err_net10_unknown_flag", bytes([0x04, 0x00, 0x00]), "flag byte bit 2 is not defined", fmt="net10 flag_byte",
     error="CORRUPT: debug info header: unknown flag byte 0x04")
pp = bytearray(40); pp[16:20] = (0x40000000).to_bytes(4, "little")
case("err_net10_absurd_patchpoint", bytes([1]) + bytes(pp), "a PatchpointInfo with 2^30 locals", fmt="net10 flag_byte",
     error="CORRUPT: debug info patchpoint chunk: 1073741824 locals is absurd")
case("err_net10_truncated_patchpoint", bytes([1]) + bytes(8), "the flag byte announces patchpoint info that is cut",
     fmt="net10 flag_byte", error="CORRUPT: debug info header: truncated (9 bytes, need 21)")


def write_corpus():
    """corpus/<case>: the raw seed of every case (hand-built and real) for tests/fuzz/fuzz_debuginfo.c:
    one options byte (bit 0 .NET 10, bit 1 flag byte, bit 2 x86), then the blob."""
    cdir = os.path.join(HERE, "corpus")
    if os.path.isdir(cdir):
        shutil.rmtree(cdir)
    os.makedirs(cdir)
    for name in sorted(os.listdir(HERE)):
        inp = os.path.join(HERE, name, "input")
        if not os.path.isfile(inp):
            continue
        hexdigits = "".join(l.split("#")[0] for l in open(inp).read().splitlines())
        blob = bytes.fromhex("".join(hexdigits.split()))
        fmt_path = os.path.join(HERE, name, "format")
        fmt = open(fmt_path).read() if os.path.isfile(fmt_path) else "net11"
        opt = (1 if "net10" in fmt else 0) | (2 if "flag_byte" in fmt else 0) | (4 if "x86" in fmt else 0)
        with open(os.path.join(cdir, name), "wb") as f:
            f.write(bytes([opt]) + blob)


def main():
    for name, (blob, comment, fmt, expected, error) in sorted(CASES.items()):
        d = os.path.join(HERE, name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        with open(os.path.join(d, "input"), "w") as f:
            f.write(hexdump(blob, comment))
        if fmt != "net11":
            with open(os.path.join(d, "format"), "w") as f:
                f.write(fmt + "\n")
        with open(os.path.join(d, "expected" if expected else "error"), "w") as f:
            f.write(expected if expected else error + "\n")
    write_corpus()


if __name__ == "__main__":
    main()
