// oracle objects: the instance fields of given heap objects, and values reached from static fields,
// read through Microsoft's DAC (ClrMD). Ground truth for what a chain awaits (issue 4: the "awaiting"
// line names the Task field of the head RuntimeAsyncTaskContinuation, which is the
// TaskCompletionSource's task).
//
//   oracle objects <core> --dac <libmscordaccore.so> [--out <file.json>]
//                  [--static <Namespace.Type>::<field>[.<field>...]]... [--stack <os-thread-id>]...
//                  [--refs-to <address>]... [--roots] [<address>...]
//
// Writes {"objects": {"0x..": {"type", "method_table", "size", "fields": {name: value}}},
//         "statics": {"<path>": {"address", "type", "fields"} or {"error"}},
//         "stacks": {"<os-thread-id>": [{"kind", "ip", "sp", "method", "frame_name"}, ...]},
//         "refs_to": {"0x..": ["0x.." of every heap object referencing it]},
//         "roots": [{"kind", "address", "object", "thread"}] (--roots: ClrMD's GC roots: every strong
//                   handle, each thread's stack roots as the GC sees them, the finalizer queue's ready
//                   objects, and the additional roots; thread: the OS thread id of a stack root),
//         "dependent": [{"address", "object", "dependent"}] (--roots: every dependent handle)}; an exception object
// also has "exception": {"type", "message", "inner", "hresult", "stack": [{"ip", "method"}]}.
// A stack is ClrMD's EnumerateStackTrace of that thread: "kind" ManagedMethod for frames of managed
// code (ip = the frame's instruction pointer: the return address except in the leaf), Runtime for
// the runtime's explicit Frames (which may name a method that is not running, e.g. a method being
// prepared by the prestub).
// A field value is "0x.." for an object reference (the referenced address) and for pointers, a
// number for other primitives, and {"struct": type} for embedded value types (not expanded).
// A --static path starts at a static reference field (the first app domain's value) and follows
// instance reference fields, e.g. AsyncdacSamples.NestedApp::s_gate._task.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class ObjectsCommand
    {
        public static int Run(string[] argv)
        {
            var statics = new List<string>();
            var stacks = new List<uint>();
            var refsTo = new List<ulong>();
            bool roots = false;
            var rest = new List<string>();
            for (int i = 0; i < argv.Length; i++)
            {
                if (argv[i] == "--static")
                {
                    if (i + 1 >= argv.Length)
                        throw new OracleException("--static needs <Type>::<field>[.<field>...]");
                    statics.Add(argv[++i]);
                }
                else if (argv[i] == "--stack")
                {
                    if (i + 1 >= argv.Length || !uint.TryParse(argv[i + 1], out uint tid))
                        throw new OracleException("--stack needs an OS thread id");
                    stacks.Add(tid);
                    i++;
                }
                else if (argv[i] == "--roots")
                {
                    roots = true;
                }
                else if (argv[i] == "--refs-to")
                {
                    string a = i + 1 < argv.Length ? argv[i + 1] : "";
                    string h = a.StartsWith("0x", StringComparison.OrdinalIgnoreCase) ? a[2..] : a;
                    if (!ulong.TryParse(h, System.Globalization.NumberStyles.HexNumber, null, out ulong v))
                        throw new OracleException("--refs-to needs an object address");
                    refsTo.Add(v);
                    i++;
                }
                else
                {
                    rest.Add(argv[i]);
                }
            }
            var (pos, opt) = Args.Parse(rest.ToArray(), "--dac", "--out");
            if (pos.Count < 1)
                throw new OracleException("usage: oracle objects <core> --dac <libmscordaccore.so> [--out <file.json>] " +
                                          "[--static <Type>::<field>[.<field>...]]... [<address>...]");
            string core = Args.RequireFile(pos[0], "core file");
            string dac = Dac.PathOption(opt);
            string? outPath = opt.GetValueOrDefault("--out");
            var addresses = new List<ulong>();
            foreach (string a in pos.Skip(1))
            {
                string s = a.StartsWith("0x", StringComparison.OrdinalIgnoreCase) ? a[2..] : a;
                if (!ulong.TryParse(s, System.Globalization.NumberStyles.HexNumber, null, out ulong v))
                    throw new OracleException($"bad address '{a}'");
                addresses.Add(v);
            }

            using (Dac d = Dac.Open(core, dac))
            {
                ClrRuntime rt = d.Runtime;
                var ms = new MemoryStream();
                using (var j = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = true }))
                {
                    j.WriteStartObject();
                    j.WriteStartObject("objects");
                    foreach (ulong a in addresses)
                        WriteObject(j, rt.Heap.GetObject(a));
                    j.WriteEndObject();
                    j.WriteStartObject("statics");
                    foreach (string path in statics)
                        WriteStatic(j, rt, path);
                    j.WriteEndObject();
                    j.WriteStartObject("stacks");
                    foreach (uint tid in stacks)
                        WriteStack(j, rt, tid);
                    j.WriteEndObject();
                    // Every heap object holding a reference to each --refs-to address (ClrMD's GCDesc walk).
                    j.WriteStartObject("refs_to");
                    foreach (ulong target in refsTo)
                    {
                        j.WriteStartArray(Hex(target));
                        foreach (ClrObject o in rt.Heap.EnumerateObjects())
                            if (o.Type != null && o.EnumerateReferences(false, false).Any(r => r.Address == target))
                                j.WriteStringValue(Hex(o.Address));
                        j.WriteEndArray();
                    }
                    j.WriteEndObject();
                    if (roots)
                        WriteRoots(j, rt);
                    j.WriteEndObject();
                }
                if (outPath == null)
                {
                    using var stdout = Console.OpenStandardOutput();
                    ms.WriteTo(stdout);
                }
                else
                {
                    File.WriteAllBytes(outPath, ms.ToArray());
                }
            }
            return 0;
        }

        private static void WriteRoots(Utf8JsonWriter j, ClrRuntime rt)
        {
            j.WriteStartArray("roots");
            void One(ClrRoot r, uint? thread)
            {
                j.WriteStartObject();
                j.WriteString("kind", r.RootKind.ToString());
                j.WriteString("address", Hex(r.Address));
                j.WriteString("object", Hex(r.Object.Address));
                if (thread is uint tid)
                    j.WriteNumber("thread", tid);
                else
                    j.WriteNull("thread");
                j.WriteEndObject();
            }
            foreach (ClrHandle hd in rt.EnumerateHandles().Where(hd => hd.IsStrong))
                One(hd, null);
            foreach (ClrThread th in rt.Threads)
                foreach (ClrRoot r in th.EnumerateStackRoots())
                    One(r, th.OSThreadId);
            foreach (ClrRoot r in rt.Heap.EnumerateFinalizerRoots())
                One(r, null);
            foreach (ClrRoot r in rt.Heap.EnumerateAdditionalRoots())
                One(r, null);
            j.WriteEndArray();
            j.WriteStartArray("dependent");
            foreach (ClrHandle hd in rt.EnumerateHandles().Where(hd => hd.HandleKind == ClrHandleKind.Dependent))
            {
                j.WriteStartObject();
                j.WriteString("address", Hex(hd.Address));
                j.WriteString("object", Hex(hd.Object.Address));
                j.WriteString("dependent", Hex(hd.Dependent.Address));
                j.WriteEndObject();
            }
            j.WriteEndArray();
        }

        private static void WriteObject(Utf8JsonWriter j, ClrObject o)
        {
            j.WriteStartObject(Hex(o.Address));
            ClrType? t = o.Type;
            if (t == null)
            {
                j.WriteString("error", "no type (not an object the DAC knows)");
                j.WriteEndObject();
                return;
            }
            j.WriteString("type", t.Name);
            j.WriteString("method_table", Hex(t.MethodTable));
            j.WriteNumber("size", o.Size);
            WriteFields(j, o, t);
            if (o.IsException)
                WriteException(j, o.AsException());
            j.WriteEndObject();
        }

        // What ClrMD reads of an exception (pe's facts): type, message, inner, HResult, stack trace.
        private static void WriteException(Utf8JsonWriter j, ClrException? e)
        {
            if (e == null)
                return;
            j.WriteStartObject("exception");
            j.WriteString("type", e.Type.Name);
            j.WriteString("message", e.Message);
            if (e.Inner != null)
                j.WriteString("inner", Hex(e.Inner.Address));
            else
                j.WriteNull("inner");
            j.WriteNumber("hresult", e.HResult);
            j.WriteStartArray("stack");
            foreach (ClrStackFrame f in e.StackTrace)
            {
                j.WriteStartObject();
                j.WriteString("ip", Hex(f.InstructionPointer));
                j.WriteString("method", f.Method?.Signature);
                j.WriteEndObject();
            }
            j.WriteEndArray();
            j.WriteEndObject();
        }

        private static void WriteFields(Utf8JsonWriter j, ClrObject o, ClrType t)
        {
            j.WriteStartObject("fields");
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (ClrInstanceField f in t.Fields)
            {
                string name = f.Name ?? "?";
                if (!seen.Add(name))
                    continue; // a base class's field of the same name: the most derived one was written
                WriteValue(j, name, f, o.Address);
            }
            j.WriteEndObject();
        }

        private static void WriteValue(Utf8JsonWriter j, string name, ClrInstanceField f, ulong obj)
        {
            try
            {
                if (f.IsObjectReference)
                {
                    j.WriteString(name, Hex(f.ReadObject(obj, false).Address));
                    return;
                }
                switch (f.ElementType)
                {
                    case ClrElementType.Boolean:
                        j.WriteBoolean(name, f.Read<byte>(obj, false) != 0);
                        return;
                    case ClrElementType.Int8:
                        j.WriteNumber(name, f.Read<sbyte>(obj, false));
                        return;
                    case ClrElementType.UInt8:
                        j.WriteNumber(name, f.Read<byte>(obj, false));
                        return;
                    case ClrElementType.Char:
                    case ClrElementType.UInt16:
                        j.WriteNumber(name, f.Read<ushort>(obj, false));
                        return;
                    case ClrElementType.Int16:
                        j.WriteNumber(name, f.Read<short>(obj, false));
                        return;
                    case ClrElementType.Int32:
                        j.WriteNumber(name, f.Read<int>(obj, false));
                        return;
                    case ClrElementType.UInt32:
                        j.WriteNumber(name, f.Read<uint>(obj, false));
                        return;
                    case ClrElementType.Int64:
                        j.WriteNumber(name, f.Read<long>(obj, false));
                        return;
                    case ClrElementType.UInt64:
                        j.WriteNumber(name, f.Read<ulong>(obj, false));
                        return;
                    case ClrElementType.Float:
                        j.WriteNumber(name, f.Read<float>(obj, false));
                        return;
                    case ClrElementType.Double:
                        j.WriteNumber(name, f.Read<double>(obj, false));
                        return;
                    case ClrElementType.Pointer:
                    case ClrElementType.FunctionPointer:
                    case ClrElementType.NativeInt:
                    case ClrElementType.NativeUInt:
                        j.WriteString(name, Hex(f.Read<ulong>(obj, false)));
                        return;
                    default:
                        j.WriteStartObject(name);
                        j.WriteString("struct", f.Type?.Name ?? f.ElementType.ToString());
                        j.WriteEndObject();
                        return;
                }
            }
            catch (Exception e) when (e is InvalidOperationException or ClrDiagnosticsException or ArgumentException)
            {
                j.WriteStartObject(name);
                j.WriteString("error", e.Message);
                j.WriteEndObject();
            }
        }

        private static ClrType? FindType(ClrRuntime rt, string name)
        {
            foreach (ClrModule m in rt.EnumerateModules())
            {
                ClrType? t = m.GetTypeByName(name);
                if (t != null)
                    return t;
            }
            return null;
        }

        private static void WriteStatic(Utf8JsonWriter j, ClrRuntime rt, string path)
        {
            j.WriteStartObject(path);
            int sep = path.IndexOf("::", StringComparison.Ordinal);
            string[] fields = sep > 0 ? path[(sep + 2)..].Split('.') : Array.Empty<string>();
            ClrType? type = sep > 0 ? FindType(rt, path[..sep]) : null;
            ClrStaticField? sf = type?.StaticFields.FirstOrDefault(f => f.Name == (fields.Length > 0 ? fields[0] : null));
            ClrAppDomain? domain = rt.AppDomains.FirstOrDefault();
            if (sep <= 0 || fields.Length == 0)
                j.WriteString("error", "want <Namespace.Type>::<field>[.<field>...]");
            else if (type == null)
                j.WriteString("error", $"type {path[..sep]} not found");
            else if (sf == null || domain == null)
                j.WriteString("error", $"{type.Name} has no static field {fields[0]}");
            else
            {
                ClrObject cur = sf.ReadObject(domain);
                string? error = null;
                foreach (string name in fields.Skip(1))
                {
                    if (cur.IsNull || cur.Type == null)
                    {
                        error = $"null or untyped object before .{name}";
                        break;
                    }
                    ClrInstanceField? f = cur.Type.GetFieldByName(name);
                    if (f == null || !f.IsObjectReference)
                    {
                        error = $"{cur.Type.Name} has no reference field {name}";
                        break;
                    }
                    cur = f.ReadObject(cur.Address, false);
                }
                if (error != null)
                {
                    j.WriteString("error", error);
                }
                else
                {
                    j.WriteString("address", Hex(cur.Address));
                    j.WriteString("type", cur.Type?.Name);
                    if (!cur.IsNull && cur.Type != null)
                        WriteFields(j, cur, cur.Type);
                }
            }
            j.WriteEndObject();
        }

        private static void WriteStack(Utf8JsonWriter j, ClrRuntime rt, uint tid)
        {
            ClrThread? thread = rt.Threads.FirstOrDefault(t => t.OSThreadId == tid);
            if (thread == null)
            {
                j.WriteStartObject(tid.ToString(System.Globalization.CultureInfo.InvariantCulture));
                j.WriteString("error", $"no managed thread with OS id {tid}");
                j.WriteEndObject();
                return;
            }
            j.WriteStartArray(tid.ToString(System.Globalization.CultureInfo.InvariantCulture));
            int n = 0;
            foreach (ClrStackFrame f in thread.EnumerateStackTrace())
            {
                if (n++ >= 256)
                    break;
                j.WriteStartObject();
                j.WriteString("kind", f.Kind.ToString());
                j.WriteString("ip", Hex(f.InstructionPointer));
                j.WriteString("sp", Hex(f.StackPointer));
                j.WriteString("method", f.Method?.Signature);
                j.WriteString("frame_name", f.FrameName);
                j.WriteEndObject();
            }
            j.WriteEndArray();
        }

        private static string Hex(ulong v) => "0x" + v.ToString("x");
    }
}
