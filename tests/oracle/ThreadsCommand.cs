// oracle threads <core> --dac <libmscordaccore.so>
//     Prints ClrMD's managed threads (ClrRuntime.Threads, in the thread store's order) as JSON:
//     {"threads": [{"managed_id", "os_id", "address", "state", "gc_mode" ("cooperative" | "preemptive"),
//     "finalizer", "alive", "exception": {"object", "type"} | null}]}; addresses as "0x" + 16 hex digits.
//     The exception is ClrThread.CurrentException (the thread's last thrown object).
using System.IO;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class ThreadsCommand
    {
        static string Hex(ulong v) => "0x" + v.ToString("x16");

        public static int Run(string[] args)
        {
            var (pos, opt) = Args.Parse(args, "--dac");
            if (pos.Count != 1)
                throw new OracleException("usage: oracle threads <core> --dac <libmscordaccore.so>");
            string core = Args.RequireFile(pos[0], "core file");
            using Dac d = Dac.Open(core, Dac.PathOption(opt));
            var ms = new MemoryStream();
            using (var j = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = true }))
            {
                j.WriteStartObject();
                j.WriteStartArray("threads");
                foreach (ClrThread th in d.Runtime.Threads)
                {
                    j.WriteStartObject();
                    j.WriteNumber("managed_id", th.ManagedThreadId);
                    j.WriteNumber("os_id", th.OSThreadId);
                    j.WriteString("address", Hex(th.Address));
                    j.WriteNumber("state", (long)th.State);
                    j.WriteString("gc_mode", th.GCMode == GCMode.Cooperative ? "cooperative" : "preemptive");
                    j.WriteBoolean("finalizer", th.IsFinalizer);
                    j.WriteBoolean("alive", th.IsAlive);
                    ClrException? e = th.CurrentException;
                    if (e == null)
                    {
                        j.WriteNull("exception");
                    }
                    else
                    {
                        j.WriteStartObject("exception");
                        j.WriteString("object", Hex(e.Address));
                        j.WriteString("type", e.Type?.Name);
                        j.WriteEndObject();
                    }
                    j.WriteEndObject();
                }
                j.WriteEndArray();
                j.WriteEndObject();
            }
            System.Console.Out.WriteLine(System.Text.Encoding.UTF8.GetString(ms.ToArray()));
            return 0;
        }
    }
}
