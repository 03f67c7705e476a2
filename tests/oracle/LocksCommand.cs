// oracle locks <core> --dac <libmscordaccore.so>
//     Prints ClrMD's view of the locks held, through Microsoft's DAC, as JSON:
//     {"sync_blocks": [{"object", "held", "owner_managed_id", "owner_os_id", "recursion", "waiting"}],
//      "thin_locks": [{"object", "owner_managed_id", "owner_os_id", "recursion"}]}
//     (every sync block in use, held or not; every object whose header holds a thin lock; addresses
//     as "0x" + 16 hex digits; an owner ClrMD cannot name is null).
using System.IO;
using System.Linq;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class LocksCommand
    {
        static string Hex(ulong v) => "0x" + v.ToString("x16");

        public static int Run(string[] args)
        {
            var (pos, opt) = Args.Parse(args, "--dac");
            if (pos.Count != 1)
                throw new OracleException("usage: oracle locks <core> --dac <libmscordaccore.so>");
            string core = Args.RequireFile(pos[0], "core file");
            using Dac d = Dac.Open(core, Dac.PathOption(opt));
            var threads = d.Runtime.Threads.ToDictionary(t => t.Address);
            var ms = new MemoryStream();
            using (var j = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = true }))
            {
                j.WriteStartObject();
                j.WriteStartArray("sync_blocks");
                foreach (var sb in d.Runtime.Heap.EnumerateSyncBlocks())
                {
                    j.WriteStartObject();
                    j.WriteString("object", Hex(sb.Object));
                    j.WriteBoolean("held", sb.IsMonitorHeld);
                    if (sb.HoldingThreadAddress != 0 && threads.TryGetValue(sb.HoldingThreadAddress, out ClrThread? t))
                    {
                        j.WriteNumber("owner_managed_id", t.ManagedThreadId);
                        j.WriteNumber("owner_os_id", t.OSThreadId);
                    }
                    else
                    {
                        j.WriteNull("owner_managed_id");
                        j.WriteNull("owner_os_id");
                    }
                    j.WriteNumber("recursion", sb.RecursionCount);
                    j.WriteNumber("waiting", sb.WaitingThreadCount);
                    j.WriteEndObject();
                }
                j.WriteEndArray();
                j.WriteStartArray("thin_locks");
                foreach (ClrObject o in d.Runtime.Heap.EnumerateObjects())
                {
                    ClrThinLock? tl = o.GetThinLock();
                    if (tl == null)
                        continue;
                    j.WriteStartObject();
                    j.WriteString("object", Hex(o.Address));
                    if (tl.Thread != null)
                    {
                        j.WriteNumber("owner_managed_id", tl.Thread.ManagedThreadId);
                        j.WriteNumber("owner_os_id", tl.Thread.OSThreadId);
                    }
                    else
                    {
                        j.WriteNull("owner_managed_id");
                        j.WriteNull("owner_os_id");
                    }
                    j.WriteNumber("recursion", tl.Recursion);
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
