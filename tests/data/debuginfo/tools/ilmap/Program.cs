// ilmap <core> --dac <libmscordaccore.so> [--bytes N] <ip|Namespace.Type::Method|stacks> ...
//
// For each method (found by an instruction pointer inside it, or by name): prints its native code
// start, the debug-info blob pointer from its code header (RealCodeHeader.DebugInfo at
// [codeStart - ptrsize] + 0) with the first N bytes of the blob, and Microsoft's decoding of its
// bounds (ClrMD ILOffsetMap, from the DAC) as "map <il> <start> <end>" lines, offsets relative to
// the code start, IL offsets signed (-1 NO_MAPPING, -2 PROLOG, -3 EPILOG).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using Microsoft.Diagnostics.Runtime;

internal static class Program
{
    private static int Main(string[] args)
    {
        string? core = null, dac = null;
        int bytes = 4096;
        var specs = new List<string>();
        for (int i = 0; i < args.Length; i++)
        {
            if (args[i] == "--dac") dac = args[++i];
            else if (args[i] == "--bytes") bytes = int.Parse(args[++i], CultureInfo.InvariantCulture);
            else if (core == null) core = args[i];
            else specs.Add(args[i]);
        }
        if (core == null || dac == null || specs.Count == 0)
        {
            Console.Error.WriteLine("usage: ilmap <core> --dac <libmscordaccore.so> [--bytes N] <ip|Type::Method> ...");
            return 2;
        }
        using DataTarget dt = DataTarget.LoadDump(core);
        ClrRuntime rt;
        try { rt = dt.ClrVersions[0].CreateRuntime(dac); }
        catch (ClrDiagnosticsException) { rt = dt.ClrVersions[0].CreateRuntime(dac, ignoreMismatch: true); }
        using (rt)
        {
            int rc = 0;
            foreach (string spec in specs)
            {
                var methods = new List<ClrMethod>();
                if (spec == "stacks")
                {
                    // Every JIT'd method on a managed stack (a way to reach user code of runtimes
                    // whose continuations carry no DiagnosticIP, e.g. .NET 10).
                    foreach (ClrThread th in rt.Threads)
                        foreach (ClrStackFrame f in th.EnumerateStackTrace())
                            if (f.Method != null && f.Method.CompilationType == MethodCompilationType.Jit && !methods.Contains(f.Method))
                                methods.Add(f.Method);
                }
                else if (spec.StartsWith("0x", StringComparison.Ordinal))
                {
                    ClrMethod? m = rt.GetMethodByInstructionPointer(ulong.Parse(spec.AsSpan(2), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                    if (m != null) methods.Add(m);
                }
                else
                {
                    int sep = spec.IndexOf("::", StringComparison.Ordinal);
                    string type = spec[..sep], name = spec[(sep + 2)..];
                    foreach (ClrModule mod in rt.EnumerateModules())
                    {
                        ClrType? t = mod.GetTypeByName(type);
                        if (t == null) continue;
                        methods.AddRange(t.Methods.Where(x => x.Name == name && x.NativeCode != 0 && x.NativeCode != ulong.MaxValue));
                    }
                }
                if (methods.Count == 0)
                {
                    Console.WriteLine($"spec {spec}: not found");
                    rc = 1;
                    continue;
                }
                foreach (ClrMethod m in methods)
                    Print(dt, spec, m, bytes);
            }
            return rc;
        }
    }

    private static void Print(DataTarget dt, string spec, ClrMethod m, int bytes)
    {
        ulong start = m.HotColdInfo.HotStart != 0 ? m.HotColdInfo.HotStart : m.NativeCode;
        int ps = dt.DataReader.PointerSize;
        bool jit = m.CompilationType == MethodCompilationType.Jit;
        ulong hdr = jit ? dt.DataReader.ReadPointer(start - (ulong)ps) : 0;
        ulong di = hdr != 0 ? dt.DataReader.ReadPointer(hdr) : 0;
        Console.WriteLine($"spec {spec}");
        Console.WriteLine($"method {m.Signature}");
        Console.WriteLine($"token 0x{m.MetadataToken:x}");
        Console.WriteLine($"compilation {m.CompilationType}");
        Console.WriteLine($"code_start 0x{start:x}");
        Console.WriteLine($"hot_size {m.HotColdInfo.HotSize}");
        Console.WriteLine($"code_header 0x{hdr:x}");
        Console.WriteLine($"debug_info 0x{di:x}");
        if (di != 0)
        {
            byte[] buf = new byte[bytes];
            int got = dt.DataReader.Read(di, buf);
            Console.WriteLine("blob " + Convert.ToHexString(buf, 0, got).ToLowerInvariant());
        }
        foreach (ILToNativeMap e in m.ILOffsetMap)
            Console.WriteLine($"map {e.ILOffset} 0x{e.StartAddress - start:x} 0x{e.EndAddress - start:x}");
        Console.WriteLine("end");
    }
}
