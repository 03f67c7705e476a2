// oracle dump: ground truth for runtime-async continuations, read through Microsoft's DAC (ClrMD).
//
// Layouts are never hard-coded: the Continuation / ResumeInfo / AsyncDispatcherInfo / Task field
// offsets come from ClrMD's type and field APIs (i.e. from the DAC's view of the target's FieldDescs).
// ClrMD field offsets are relative to the start of the object's data (obj + pointer size) for
// reference types and to the start of the value for value types.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Text;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class DumpCommand
    {
        private const string ContinuationTypeName = "System.Runtime.CompilerServices.Continuation";
        private const string ResumeInfoTypeName = "System.Runtime.CompilerServices.ResumeInfo";
        private const string DispatcherTypeName = "System.Runtime.CompilerServices.AsyncDispatcherInfo";
        private const string TaskTypeName = "System.Threading.Tasks.Task";

        public static int Run(string[] argv)
        {
            var (pos, opt) = Args.Parse(argv, "--dac", "--out");
            if (pos.Count != 1)
                throw new OracleException("usage: oracle [dump] <core> --dac <libmscordaccore.so> --out <file.json> [--no-pdb]");
            string core = Args.RequireFile(pos[0], "core file");
            string dac = Dac.PathOption(opt);
            string? outPath = opt.GetValueOrDefault("--out");
            bool usePdb = !opt.ContainsKey("--no-pdb");

            using (Dac d = Dac.Open(core, dac))
            {
                var w = new Writer(d.Runtime, d.Target, usePdb, d.Notes);
                byte[] json = w.Write(core, dac, d.Clr);
                if (outPath == null)
                {
                    using var stdout = Console.OpenStandardOutput();
                    stdout.Write(json);
                }
                else
                {
                    File.WriteAllBytes(outPath, json);
                }
                Console.Error.WriteLine($"oracle: {w.ContinuationCount} continuations, {w.ChainCount} chains, {w.TaskCount} tasks" +
                                        (outPath != null ? $" -> {outPath}" : ""));
            }
            return 0;
        }

        private sealed class ContInfo
        {
            public ClrObject Obj;
            public ulong Next;
            public int State;
            public long? Flags;
            public ulong ResumeInfo;
            public ulong Resume;
            public ulong DiagnosticIP;
            public ulong Task; // task whose m_stateObject is this continuation, if any
        }

        private sealed class Writer
        {
            private readonly ClrRuntime _rt;
            private readonly DataTarget _dt;
            private readonly bool _usePdb;
            private readonly List<string> _notes;
            private readonly Dictionary<ulong, bool> _isContinuationMT = new();
            private readonly Dictionary<ulong, ClrMethod?> _methodByIP = new();
            private readonly Dictionary<string, MetadataReaderProvider?> _pdbs = new(StringComparer.Ordinal);
            private ClrType? _contType;
            private ClrInstanceField? _fNext, _fState, _fFlags, _fResumeInfo, _fResume;
            private ClrInstanceField? _riResume, _riDiagnosticIP;
            public int ContinuationCount, ChainCount, TaskCount;

            public Writer(ClrRuntime rt, DataTarget dt, bool usePdb, List<string> notes)
            {
                _rt = rt;
                _dt = dt;
                _usePdb = usePdb;
                _notes = notes;
            }

            private bool IsContinuation(ClrType? t)
            {
                if (t == null)
                    return false;
                if (_isContinuationMT.TryGetValue(t.MethodTable, out bool r))
                    return r;
                r = false;
                for (ClrType? b = t; b != null; b = b.BaseType)
                {
                    if (b.Name == ContinuationTypeName)
                    {
                        r = true;
                        _contType ??= b;
                        break;
                    }
                }
                _isContinuationMT[t.MethodTable] = r;
                return r;
            }

            private static bool DerivesFrom(ClrType? t, string name)
            {
                for (ClrType? b = t; b != null; b = b.BaseType)
                    if (b.Name == name)
                        return true;
                return false;
            }

            private ulong ReadPointer(ulong address) => _dt.DataReader.ReadPointer(address);

            private static ulong ReadNumeric(ClrInstanceField f, ulong address, bool interior)
            {
                return f.Size switch
                {
                    1 => f.Read<byte>(address, interior),
                    2 => f.Read<ushort>(address, interior),
                    4 => f.Read<uint>(address, interior),
                    _ => f.Read<ulong>(address, interior),
                };
            }

            private ContInfo ReadContinuation(ClrObject o)
            {
                var ci = new ContInfo { Obj = o };
                ci.Next = _fNext!.ReadObject(o.Address, false).Address;
                if (_fState != null)
                    ci.State = (int)(uint)ReadNumeric(_fState, o.Address, false);
                if (_fFlags != null)
                    ci.Flags = (int)(uint)ReadNumeric(_fFlags, o.Address, false);
                if (_fResumeInfo != null)
                {
                    ci.ResumeInfo = _fResumeInfo.Read<ulong>(o.Address, false);
                    if (ci.ResumeInfo != 0 && _riResume != null && _riDiagnosticIP != null)
                    {
                        // ResumeInfo is a value type: field offsets are from the start of the struct.
                        ci.Resume = ReadPointer(ci.ResumeInfo + (ulong)_riResume.Offset);
                        ci.DiagnosticIP = ReadPointer(ci.ResumeInfo + (ulong)_riDiagnosticIP.Offset);
                    }
                }
                else if (_fResume != null)
                {
                    ci.Resume = _fResume.Read<ulong>(o.Address, false); // .NET 10 array layout
                }
                return ci;
            }

            private void ResolveLayout()
            {
                if (_contType == null)
                    return;
                _fNext = _contType.GetFieldByName("Next") ?? throw new OracleException("Continuation has no field Next");
                _fState = _contType.GetFieldByName("State");
                _fFlags = _contType.GetFieldByName("Flags");
                _fResumeInfo = _contType.GetFieldByName("ResumeInfo");
                _fResume = _contType.GetFieldByName("Resume");
                if (_fResumeInfo != null)
                {
                    ClrType? ri = _contType.Module.GetTypeByName(ResumeInfoTypeName);
                    if (ri == null)
                    {
                        _notes.Add($"ClrMD/DAC could not load type {ResumeInfoTypeName}; DiagnosticIP unavailable");
                    }
                    else
                    {
                        _riResume = ri.GetFieldByName("Resume");
                        _riDiagnosticIP = ri.GetFieldByName("DiagnosticIP");
                        if (_riResume == null || _riDiagnosticIP == null)
                            _notes.Add($"{ResumeInfoTypeName} lacks Resume/DiagnosticIP fields");
                    }
                }
            }

            private ClrMethod? MethodAt(ulong ip)
            {
                if (ip == 0)
                    return null;
                if (!_methodByIP.TryGetValue(ip, out ClrMethod? m))
                {
                    m = _rt.GetMethodByInstructionPointer(ip);
                    _methodByIP[ip] = m;
                }
                return m;
            }

            public byte[] Write(string core, string dac, ClrInfo clr)
            {
                var heap = _rt.Heap;
                if (!heap.CanWalkHeap)
                    _notes.Add("ClrHeap.CanWalkHeap is false: the heap walk may be incomplete");

                // Pass 1: every continuation object and every task whose m_stateObject is a continuation.
                var conts = new List<ClrObject>();
                var taskCandidates = new List<ClrObject>();
                var taskTypeCache = new Dictionary<ulong, bool>();
                foreach (ClrObject o in heap.EnumerateObjects())
                {
                    ClrType? t = o.Type;
                    if (t == null)
                        continue;
                    if (IsContinuation(t))
                    {
                        conts.Add(o);
                        continue;
                    }
                    if (!taskTypeCache.TryGetValue(t.MethodTable, out bool isTask))
                        taskTypeCache[t.MethodTable] = isTask = DerivesFrom(t, TaskTypeName);
                    if (isTask)
                        taskCandidates.Add(o);
                }
                ResolveLayout();

                var infos = new Dictionary<ulong, ContInfo>();
                foreach (ClrObject o in conts)
                    infos[o.Address] = ReadContinuation(o);

                var tasks = new List<(ClrObject task, ulong head)>();
                foreach (ClrObject t in taskCandidates)
                {
                    ClrInstanceField? f = t.Type!.GetFieldByName("m_stateObject");
                    if (f == null)
                        continue;
                    ulong so = f.ReadObject(t.Address, false).Address;
                    if (so != 0 && infos.TryGetValue(so, out ContInfo? head))
                    {
                        tasks.Add((t, so));
                        head.Task = t.Address;
                    }
                }
                ContinuationCount = infos.Count;
                TaskCount = tasks.Count;

                var ms = new MemoryStream();
                using (var j = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = true }))
                {
                    j.WriteStartObject();
                    j.WriteString("tool", "asyncdac-oracle (ClrMD " + typeof(DataTarget).Assembly.GetName().Version + ")");
                    j.WriteString("core", Path.GetFullPath(core));
                    j.WriteString("dac", Path.GetFullPath(dac));
                    j.WriteStartObject("runtime");
                    j.WriteString("module", clr.ModuleInfo.FileName);
                    j.WriteString("base", Hex(clr.ModuleInfo.ImageBase));
                    j.WriteString("clrmd_reported_version", clr.Version.ToString());
                    j.WriteString("flavor", clr.Flavor.ToString());
                    j.WriteNumber("pointer_size", _dt.DataReader.PointerSize);
                    j.WriteEndObject();
                    j.WriteStartArray("notes");
                    foreach (string n in _notes)
                        j.WriteStringValue(n);
                    j.WriteEndArray();

                    WriteLayout(j);
                    WriteContinuations(j, infos);
                    WriteTasks(j, tasks, infos);
                    WriteChains(j, infos);
                    WriteDispatchers(j, infos);
                    j.WriteEndObject();
                }
                return ms.ToArray();
            }

            private void WriteLayout(Utf8JsonWriter j)
            {
                j.WriteStartObject("layout");
                if (_contType != null)
                {
                    j.WriteString("continuation_method_table", Hex(_contType.MethodTable));
                    j.WriteStartArray("continuation_fields");
                    foreach (ClrInstanceField f in _contType.Fields)
                    {
                        j.WriteStartObject();
                        j.WriteString("name", f.Name);
                        j.WriteString("type", f.Type?.Name);
                        j.WriteString("element_type", f.ElementType.ToString());
                        j.WriteNumber("offset", f.Offset + _dt.DataReader.PointerSize); // from the object address
                        j.WriteNumber("size", f.Size);
                        j.WriteEndObject();
                    }
                    j.WriteEndArray();
                    if (_riResume != null && _riDiagnosticIP != null)
                    {
                        j.WriteStartObject("resume_info_fields");
                        j.WriteNumber("Resume", _riResume.Offset);
                        j.WriteNumber("DiagnosticIP", _riDiagnosticIP.Offset);
                        j.WriteEndObject();
                    }
                }
                j.WriteEndObject();
            }

            private void WriteMethod(Utf8JsonWriter j, string prop, ulong ip)
            {
                ClrMethod? m = MethodAt(ip);
                if (m == null)
                {
                    j.WriteNull(prop);
                    return;
                }
                j.WriteStartObject(prop);
                j.WriteString("name", m.Name);
                j.WriteString("type", m.Type?.Name);
                j.WriteString("signature", m.Signature);
                j.WriteString("method_desc", Hex(m.MethodDesc));
                j.WriteString("token", Hex((ulong)m.MetadataToken));
                j.WriteString("native_code", Hex(m.NativeCode));
                j.WriteString("hot_start", Hex(m.HotColdInfo.HotStart));
                j.WriteNumber("hot_size", m.HotColdInfo.HotSize);
                j.WriteNumber("ip_offset", ip >= m.HotColdInfo.HotStart && ip < m.HotColdInfo.HotStart + m.HotColdInfo.HotSize
                                               ? (long)(ip - m.HotColdInfo.HotStart) : -1);
                j.WriteString("compilation", m.CompilationType.ToString());
                j.WriteString("module", m.Type?.Module?.Name);
                // ClrMD's GetILOffset treats map ranges as [start, end] and so, when ip is exactly the
                // start of a range, answers with the previous range (often EPILOG, -3). DiagnosticIP is
                // always such a range start, so the IL offset is looked up here with [start, end).
                int il = ILOffsetAt(m, ip);
                j.WriteNumber("il_offset", il);
                j.WriteNumber("clrmd_il_offset", m.GetILOffset(ip));
                (string? file, int line) = _usePdb ? SourceLine(m, il) : (null, 0);
                if (file != null)
                {
                    j.WriteString("source_file", file);
                    j.WriteNumber("source_line", line);
                }
                j.WriteEndObject();
            }

            // Shared generic code (a System.__Canon instantiation) runs for one exact instantiation,
            // which the continuation saves with the rest of its data: the generic context (the exact
            // InstantiatedMethodDesc, or the exact MethodTable) or `this`. Found here by scanning the
            // continuation's pointer-sized slots for a value the DAC knows as a MethodDesc of the same
            // method, a MethodTable of the same type, or an object of that type: no async debug info
            // involved, so asyncdac's reading of it is checked independently.
            private void WriteExactInstantiation(Utf8JsonWriter j, ContInfo c)
            {
                ClrMethod? m = MethodAt(c.DiagnosticIP);
                ClrType? declaring = m?.Type;
                if (m == null || declaring == null || m.Signature == null || !m.Signature.Contains("System.__Canon"))
                    return;
                int ps = _dt.DataReader.PointerSize;
                if (_fState == null)
                    return;
                ulong start = (ulong)(_fState.Offset + ps + 4); // the data after the Continuation fields
                for (ulong off = (start + (ulong)ps - 1) / (ulong)ps * (ulong)ps; off + (ulong)ps <= c.Obj.Size; off += (ulong)ps)
                {
                    ulong v = ReadPointer(c.Obj.Address + off);
                    if (v == 0 || v % (ulong)ps != 0)
                        continue;
                    ClrMethod? cm = null;
                    ClrType? ct = null;
                    try { cm = _rt.GetMethodByHandle(v); } catch (Exception) { }
                    if (cm != null && cm.MethodDesc != m.MethodDesc && cm.MetadataToken == m.MetadataToken &&
                        cm.Type?.Module?.Name == declaring.Module?.Name)
                    {
                        WriteExact(j, "method_desc", off, v, cm.Type?.Name, cm.Signature);
                        return;
                    }
                    try { ct = _rt.GetTypeByMethodTable(v); } catch (Exception) { }
                    if (ct != null && SameTypeDefinition(ct, declaring))
                    {
                        WriteExact(j, "method_table", off, v, ct.Name, null);
                        return;
                    }
                    ClrObject o = _rt.Heap.GetObject(v);
                    for (ClrType? t = o.IsValid ? o.Type : null; t != null; t = t.BaseType)
                    {
                        if (SameTypeDefinition(t, declaring))
                        {
                            WriteExact(j, "this", off, v, t.Name, null);
                            return;
                        }
                    }
                }
            }

            private static bool SameTypeDefinition(ClrType t, ClrType declaring) =>
                t.MethodTable != declaring.MethodTable && t.MetadataToken == declaring.MetadataToken &&
                t.Module?.Name == declaring.Module?.Name;

            private static void WriteExact(Utf8JsonWriter j, string from, ulong offset, ulong value, string? type, string? signature)
            {
                j.WriteStartObject("exact_instantiation");
                j.WriteString("from", from);
                j.WriteNumber("offset", (long)offset);
                j.WriteString("value", Hex(value));
                j.WriteString("type", type);
                if (signature != null)
                    j.WriteString("signature", signature);
                j.WriteEndObject();
            }

            private static int ILOffsetAt(ClrMethod m, ulong ip)
            {
                foreach (ILToNativeMap e in m.ILOffsetMap)
                    if (ip >= e.StartAddress && ip < e.EndAddress)
                        return e.ILOffset;
                return m.GetILOffset(ip);
            }

            // Maps (method, IL offset) to a source line with the portable PDB next to the module file.
            private (string? file, int line) SourceLine(ClrMethod m, int il)
            {
                string? module = m.Type?.Module?.Name;
                if (module == null || il < 0 || m.MetadataToken == 0)
                    return (null, 0);
                if (!_pdbs.TryGetValue(module, out MetadataReaderProvider? provider))
                {
                    provider = null;
                    string pdb = Path.ChangeExtension(module, ".pdb");
                    if (File.Exists(pdb))
                    {
                        try
                        {
                            provider = MetadataReaderProvider.FromPortablePdbStream(File.OpenRead(pdb));
                        }
                        catch (BadImageFormatException)
                        {
                            provider = null;
                        }
                    }
                    _pdbs[module] = provider;
                }
                if (provider == null)
                    return (null, 0);
                MetadataReader pdbReader = provider.GetMetadataReader();
                int row = m.MetadataToken & 0xffffff;
                if ((m.MetadataToken >> 24) != 0x06 || row == 0 || row > pdbReader.MethodDebugInformation.Count)
                    return (null, 0); // not a MethodDef of this module (IL stubs, dynamic methods)
                var handle = MetadataTokens.MethodDebugInformationHandle(row);
                SequencePoint? best = null;
                try
                {
                    foreach (SequencePoint sp in pdbReader.GetMethodDebugInformation(handle).GetSequencePoints())
                    {
                        if (sp.IsHidden || sp.Offset > il)
                            continue;
                        if (best == null || sp.Offset >= best.Value.Offset)
                            best = sp;
                    }
                }
                catch (BadImageFormatException)
                {
                    return (null, 0);
                }
                if (best == null)
                    return (null, 0);
                string file = pdbReader.GetString(pdbReader.GetDocument(best.Value.Document).Name);
                return (file, best.Value.StartLine);
            }

            private void WriteContinuations(Utf8JsonWriter j, Dictionary<ulong, ContInfo> infos)
            {
                j.WriteStartArray("continuations");
                foreach (ContInfo c in infos.Values)
                {
                    j.WriteStartObject();
                    j.WriteString("address", Hex(c.Obj.Address));
                    j.WriteString("method_table", Hex(c.Obj.Type!.MethodTable));
                    j.WriteString("type", c.Obj.Type.Name);
                    j.WriteNumber("size", (long)c.Obj.Size);
                    j.WriteString("next", Hex(c.Next));
                    j.WriteNumber("state", c.State);
                    if (c.Flags.HasValue)
                        j.WriteString("flags", Hex((ulong)(uint)c.Flags.Value));
                    if (_fResumeInfo != null)
                        j.WriteString("resume_info", Hex(c.ResumeInfo));
                    j.WriteString("resume", Hex(c.Resume));
                    if (_fResumeInfo != null)
                        j.WriteString("diagnostic_ip", Hex(c.DiagnosticIP));
                    if (c.Task != 0)
                        j.WriteString("task", Hex(c.Task));
                    WriteMethod(j, "method", c.DiagnosticIP);
                    WriteExactInstantiation(j, c);
                    if (_fResumeInfo == null && c.Resume != 0)
                        WriteMethod(j, "resume_method", c.Resume);
                    j.WriteEndObject();
                }
                j.WriteEndArray();
            }

            private void WriteTasks(Utf8JsonWriter j, List<(ClrObject task, ulong head)> tasks, Dictionary<ulong, ContInfo> infos)
            {
                j.WriteStartArray("tasks");
                foreach (var (task, head) in tasks)
                {
                    j.WriteStartObject();
                    j.WriteString("address", Hex(task.Address));
                    j.WriteString("method_table", Hex(task.Type!.MethodTable));
                    j.WriteString("type", task.Type.Name);
                    ClrInstanceField? flags = task.Type.GetFieldByName("m_stateFlags");
                    if (flags != null)
                        j.WriteString("state_flags", Hex((ulong)(uint)flags.Read<int>(task.Address, false)));
                    j.WriteString("head", Hex(head));
                    j.WriteString("head_type", infos[head].Obj.Type!.Name);
                    j.WriteEndObject();
                }
                j.WriteEndArray();
            }

            private void WriteChainFrames(Utf8JsonWriter j, ulong first, Dictionary<ulong, ContInfo> infos)
            {
                j.WriteStartArray("frames");
                var seen = new HashSet<ulong>();
                for (ulong a = first; a != 0 && seen.Add(a);)
                {
                    j.WriteStartObject();
                    j.WriteString("address", Hex(a));
                    if (!infos.TryGetValue(a, out ContInfo? c))
                    {
                        j.WriteString("error", "Next does not point at a continuation found on the heap");
                        j.WriteEndObject();
                        break;
                    }
                    j.WriteString("type", c.Obj.Type!.Name);
                    j.WriteNumber("state", c.State);
                    ClrMethod? m = MethodAt(c.DiagnosticIP);
                    j.WriteString("method", m?.Name);
                    j.WriteString("method_type", m?.Type?.Name);
                    j.WriteString("signature", m?.Signature);
                    j.WriteString("diagnostic_ip", Hex(c.DiagnosticIP));
                    if (m != null)
                    {
                        int il = ILOffsetAt(m, c.DiagnosticIP);
                        j.WriteNumber("il_offset", il);
                        (string? file, int line) = _usePdb ? SourceLine(m, il) : (null, 0);
                        if (file != null)
                        {
                            j.WriteString("source_file", file);
                            j.WriteNumber("source_line", line);
                        }
                    }
                    if (_fResumeInfo == null && c.Resume != 0)
                        j.WriteString("resume_stub", MethodAt(c.Resume)?.Name); // .NET 10: IL_STUB_AsyncResume_<method>_<tier>
                    j.WriteEndObject();
                    a = c.Next;
                }
                j.WriteEndArray();
            }

            private void WriteChains(Utf8JsonWriter j, Dictionary<ulong, ContInfo> infos)
            {
                var referenced = new HashSet<ulong>(infos.Values.Select(c => c.Next).Where(n => n != 0));
                j.WriteStartArray("chains");
                foreach (ContInfo head in infos.Values.Where(c => !referenced.Contains(c.Obj.Address)))
                {
                    ChainCount++;
                    j.WriteStartObject();
                    j.WriteString("head", Hex(head.Obj.Address));
                    j.WriteString("task", head.Task != 0 ? Hex(head.Task) : null);
                    WriteChainFrames(j, head.Obj.Address, infos);
                    j.WriteEndObject();
                }
                j.WriteEndArray();
            }

            // Per thread: AsyncDispatcherInfo.t_current -> records (linked through Next), each with the
            // rest of the running chain (NextContinuation...), plus the thread's managed stack.
            private void WriteDispatchers(Utf8JsonWriter j, Dictionary<ulong, ContInfo> infos)
            {
                j.WriteStartObject("dispatchers");
                ClrModule bcl = _rt.BaseClassLibrary;
                ClrType? di = bcl.GetTypeByName(DispatcherTypeName);
                ClrThreadStaticField? tCurrent = di?.ThreadStaticFields.FirstOrDefault(f => f.Name == "t_current");
                ClrInstanceField? fNext = di?.GetFieldByName("Next");
                ClrInstanceField? fNextCont = di?.GetFieldByName("NextContinuation");
                ClrInstanceField? fTask = di?.GetFieldByName("CurrentTask");
                if (di == null || tCurrent == null || fNext == null || fNextCont == null)
                {
                    j.WriteString("error", di == null ? $"type {DispatcherTypeName} not found through the DAC"
                                                      : $"{DispatcherTypeName} lacks t_current/Next/NextContinuation");
                    j.WriteEndObject();
                    return;
                }
                j.WriteString("type", di.Name);
                j.WriteStartObject("fields");
                foreach (ClrInstanceField f in di.Fields)
                    j.WriteNumber(f.Name ?? "?", f.Offset);
                j.WriteEndObject();
                j.WriteStartArray("threads");
                foreach (ClrThread thread in _rt.Threads)
                {
                    ulong cur = Dac.ThreadStaticPointer(tCurrent, thread);
                    if (cur == 0)
                        continue;
                    j.WriteStartObject();
                    j.WriteNumber("os_thread_id", thread.OSThreadId);
                    j.WriteNumber("managed_thread_id", thread.ManagedThreadId);
                    j.WriteString("t_current", Hex(cur));
                    j.WriteStartArray("records");
                    var seen = new HashSet<ulong>();
                    for (ulong rec = cur; rec != 0 && seen.Add(rec) && seen.Count < 64;)
                    {
                        j.WriteStartObject();
                        j.WriteString("address", Hex(rec));
                        // AsyncDispatcherInfo is a value type: offsets are from its start.
                        ulong nextCont = ReadPointer(rec + (ulong)fNextCont.Offset);
                        ulong next = ReadPointer(rec + (ulong)fNext.Offset);
                        j.WriteString("next", Hex(next));
                        j.WriteString("next_continuation", Hex(nextCont));
                        if (fTask != null)
                            j.WriteString("current_task", Hex(ReadPointer(rec + (ulong)fTask.Offset)));
                        WriteChainFrames(j, nextCont, infos);
                        j.WriteEndObject();
                        rec = next;
                    }
                    j.WriteEndArray();
                    j.WriteStartArray("stack");
                    int n = 0;
                    foreach (ClrStackFrame f in thread.EnumerateStackTrace())
                    {
                        if (n++ >= 64)
                            break;
                        j.WriteStringValue(f.Method?.Signature ?? f.FrameName ?? f.Kind.ToString());
                    }
                    j.WriteEndArray();
                    j.WriteEndObject();
                }
                j.WriteEndArray();
                j.WriteEndObject();
            }

            private static string Hex(ulong v) => "0x" + v.ToString("x");
        }
    }
}
