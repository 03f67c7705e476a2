"""symstore - symbol stores and servers for the symbol tests, read independently of asyncdac (python3
standard library only):

  pe_identity(path) -> (timestamp, size_of_image, pdb_name, pdb_id_hex)   COFF header and CodeView entry
  pdb_id(path) -> hex                                                     the #Pdb stream's 20-byte id
  elf_build_id(path) -> hex                                               NT_GNU_BUILD_ID
  key_for(path, debug=False) -> SSQP key (dotnet-symbol's key conventions) of a PE, portable PDB or ELF
  lay_out(store, files)        hard-links (or copies) each file to store/<its key>
  HttpStore(directory)         a symbol server on 127.0.0.1 (http.server), logging the paths asked for
  Debuginfod(directory, tmp)   Debian's debuginfod scanning a directory, on 127.0.0.1
"""
import functools
import http.server
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.request

import adactest as t


def _pe_headers(data):
    pe, = struct.unpack_from("<I", data, 0x3C)
    assert data[pe:pe + 4] == b"PE\0\0", "not a PE file"
    nsec, stamp = struct.unpack_from("<HI", data, pe + 6)
    optsize, = struct.unpack_from("<H", data, pe + 20)
    opt = pe + 24
    magic, = struct.unpack_from("<H", data, opt)
    size_of_image, = struct.unpack_from("<I", data, opt + 56)
    dirs = opt + (112 if magic == 0x20B else 96)
    dbg_rva, dbg_size = struct.unpack_from("<II", data, dirs + 6 * 8)
    sections = [struct.unpack_from("<IIII", data, opt + optsize + 40 * i + 8) for i in range(nsec)]
    return stamp, size_of_image, dbg_rva, dbg_size, sections


def pe_identity(path):
    """(TimeDateStamp, SizeOfImage, CodeView PDB file name, portable PDB id as hex) of a PE file."""
    data = open(path, "rb").read()
    stamp, size_of_image, dbg_rva, dbg_size, sections = _pe_headers(data)
    pdb_name, pdb_hex = None, None
    off = next((raw + dbg_rva - va for vsize, va, rawsize, raw in sections if va <= dbg_rva < va + max(vsize, rawsize)),
               None)
    for i in range(0, dbg_size if off is not None else 0, 28):
        _, entry_stamp, _, _, typ, size, _, raw = struct.unpack_from("<IIHHIIII", data, off + i)
        if typ == 2 and data[raw:raw + 4] == b"RSDS":
            guid = data[raw + 4:raw + 20]
            pdb_hex = (guid + struct.pack("<I", entry_stamp)).hex()
            path_bytes = data[raw + 24:raw + size].split(b"\0")[0].decode()
            pdb_name = path_bytes.replace("\\", "/").rsplit("/", 1)[-1]
    return stamp, size_of_image, pdb_name, pdb_hex


def pdb_id(path):
    """The #Pdb stream's id (GUID then stamp) of a portable PDB, as hex."""
    data = open(path, "rb").read()
    assert data[:4] == b"BSJB", "not ECMA-335 metadata"
    vlen, = struct.unpack_from("<I", data, 12)
    pos = 16 + vlen + 2
    nstreams, = struct.unpack_from("<H", data, pos)
    pos += 2
    for _ in range(nstreams):
        off, size = struct.unpack_from("<II", data, pos)
        name = data[pos + 8:data.index(b"\0", pos + 8)].decode()
        pos += 8 + (len(name) + 4) // 4 * 4
        if name == "#Pdb":
            return data[off:off + 20].hex()
    raise ValueError(f"{path}: no #Pdb stream")


def elf_build_id(path):
    """The GNU build-id of an ELF file, as hex (from its section headers' notes)."""
    data = open(path, "rb").read()
    assert data[:4] == b"\x7fELF"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    for i in range(shnum):
        sh_type, = struct.unpack_from("<I", data, shoff + i * shentsize + 4)
        off, size = struct.unpack_from("<QQ", data, shoff + i * shentsize + 0x18)
        if sh_type != 7:  # SHT_NOTE
            continue
        pos = off
        while pos + 12 <= off + size:
            namesz, descsz, typ = struct.unpack_from("<III", data, pos)
            name_at = pos + 12
            desc_at = name_at + (namesz + 3) // 4 * 4
            if typ == 3 and data[name_at:name_at + namesz] == b"GNU\0":
                return data[desc_at:desc_at + descsz].hex()
            pos = desc_at + (descsz + 3) // 4 * 4
    raise ValueError(f"{path}: no build-id")


def _guid_n(id_hex):
    g = bytes.fromhex(id_hex)[:16]
    return g[3::-1].hex() + g[5:3:-1].hex() + g[7:5:-1].hex() + g[8:].hex()


def key_for(path, debug=False):
    """The SSQP key of a file: PE name/<%08X stamp><%x size>/name, portable PDB name/<guid>FFFFFFFF/name,
    ELF name/elf-buildid-<id>/name, ELF debug file _.debug/elf-buildid-sym-<id>/_.debug."""
    name = os.path.basename(path).lower()
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic[:2] == b"MZ":
        stamp, size, _, _ = pe_identity(path)
        return f"{name}/{stamp:08X}{size:x}/{name}"
    if magic == b"BSJB":
        return f"{name}/{_guid_n(pdb_id(path))}FFFFFFFF/{name}"
    build_id = elf_build_id(path).ljust(40, "0")
    if debug:
        return f"_.debug/elf-buildid-sym-{build_id}/_.debug"
    return f"{name}/elf-buildid-{build_id}/{name}"


def lay_out(store, files):
    """Puts each (path, debug) of files at store/<key>; returns {path: key}."""
    keys = {}
    for path, debug in files:
        key = key_for(path, debug)
        dst = os.path.join(store, key)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            os.link(path, dst)
        except OSError:
            shutil.copy(path, dst)
        keys[path] = key
    return keys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpStore:
    """A symbol server for one directory laid out by key, on 127.0.0.1; `asked` lists the request
    paths in order."""

    def __init__(self, directory):
        self.asked = []
        store = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=directory, **kw)

            def do_GET(self):
                store.asked.append(self.path)
                super().do_GET()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Debuginfod:
    """Debian's debuginfod over a directory of ELF and debug files, on 127.0.0.1 (it listens on every
    interface; the client is only ever pointed at 127.0.0.1). Waits until build_id's debug file is
    served."""

    def __init__(self, directory, tmp, build_id):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(tmp, "debuginfod.log"), "w")
        self.proc = subprocess.Popen(["debuginfod", "-F", "-p", str(self.port), "-d",
                                      os.path.join(tmp, "debuginfod.sqlite"), "-t", "0", "-g", "0", directory],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        t._children.append(self.proc)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/buildid/{build_id}/debuginfo", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise SystemExit(f"FAIL: debuginfod on port {self.port} did not serve {build_id} (see {self.log.name})")

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.log.close()
