// Dac: the one place the oracle opens a core with ClrMD and creates its runtime with Microsoft's DAC
// (used by the dump, heap and objects commands).
using System;
using System.Collections.Generic;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal sealed class Dac : IDisposable
    {
        public DataTarget Target { get; }
        public ClrInfo Clr { get; }
        public ClrRuntime Runtime { get; }
        // What opening the core had to work around, one line each (the dump command writes them to
        // its JSON's "notes" and adds its own).
        public List<string> Notes { get; }

        private Dac(DataTarget target, ClrInfo clr, ClrRuntime runtime, List<string> notes)
        {
            Target = target;
            Clr = clr;
            Runtime = runtime;
            Notes = notes;
        }

        // The --dac option of a command: required, and the file must exist.
        public static string PathOption(Dictionary<string, string?> options)
        {
            if (!options.TryGetValue("--dac", out string? dac) || dac == null)
                throw new OracleException("--dac <libmscordaccore.so> is required");
            return Args.RequireFile(dac, "DAC");
        }

        // Opens core and creates the runtime of its first CLR with the DAC at dacPath.
        public static Dac Open(string core, string dacPath)
        {
            DataTarget dt = DataTarget.LoadDump(core);
            try
            {
                if (dt.ClrVersions.Length == 0)
                    throw new OracleException($"ClrMD found no CLR runtime module in {core}");
                ClrInfo clr = dt.ClrVersions[0];
                var notes = new List<string>();
                ClrRuntime rt;
                try
                {
                    rt = clr.CreateRuntime(dacPath);
                }
                catch (ClrDiagnosticsException e) when (e.Message.Contains("Mismatched dac", StringComparison.OrdinalIgnoreCase))
                {
                    // ClrMD 4.2 cannot read the version of a .NET 11 libcoreclr.so from a core (it reports 0.0),
                    // so its DAC version check always fails; the DAC is from the very same pack, so skip the check.
                    notes.Add("ClrMD version check skipped (ignoreMismatch): " + e.Message);
                    rt = clr.CreateRuntime(dacPath, ignoreMismatch: true);
                }
                return new Dac(dt, clr, rt, notes);
            }
            catch
            {
                dt.Dispose();
                throw;
            }
        }

        // The runtime first, then the data target it reads through.
        public void Dispose()
        {
            Runtime.Dispose();
            Target.Dispose();
        }

        // A pointer-sized [ThreadStatic] of one thread through the DAC (the head of the records CoreLib
        // keeps on a thread's stack for debuggers); 0 when the thread has not allocated it or it
        // cannot be read.
        public static ulong ThreadStaticPointer(ClrThreadStaticField field, ClrThread thread)
        {
            try
            {
                return field.IsInitialized(thread) ? field.Read<ulong>(thread) : 0;
            }
            catch (Exception e) when (e is InvalidOperationException or ClrDiagnosticsException)
            {
                return 0;
            }
        }
    }
}
