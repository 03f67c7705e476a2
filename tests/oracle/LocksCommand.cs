// oracle locks <core> --dac <libmscordaccore.so>
//     Prints ClrMD's view of the locks held, through Microsoft's DAC, as JSON:
//     {"sync_blocks": [{"object", "held", "owner_managed_id", "owner_os_id", "recursion", "waiting"}],
//      "thin_locks": [{"object", "owner_managed_id", "owner_os_id", "recursion"}],
//      "blocking": [{"os_thread_id", "managed_thread_id", "threadpool_worker", "records": [{"kind", "object",
//                    "type", "lock", "timeout_ms"}]}]}
//     (every sync block in use, held or not; every object whose header holds a thin lock; per thread
//     with any, the blocking records CoreLib keeps for debuggers (ThreadBlockingInfo.t_first, read
//     through ClrMD's thread statics, innermost first): _objectKind, the object its _objectPtr slot
//     holds, that object's type, the Lock (the object, or a Condition's _lock), _timeoutMs; whether
//     ClrMD's thread state has TS_TPWorkerThread (a thread-pool worker); addresses
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

        static void WriteBlocking(Utf8JsonWriter j, Dac d)
        {
            j.WriteStartArray("blocking");
            ClrType? bi = d.Runtime.BaseClassLibrary.GetTypeByName("System.Threading.ThreadBlockingInfo");
            ClrThreadStaticField? first = bi?.ThreadStaticFields.FirstOrDefault(f => f.Name == "t_first");
            ClrInstanceField? fObj = bi?.GetFieldByName("_objectPtr"), fKind = bi?.GetFieldByName("_objectKind"),
                              fTimeout = bi?.GetFieldByName("_timeoutMs"), fNext = bi?.GetFieldByName("_next");
            if (first == null || fObj == null || fKind == null || fTimeout == null || fNext == null)
            {
                j.WriteEndArray();
                return;
            }
            IDataReader r = d.Target.DataReader;
            foreach (ClrThread thread in d.Runtime.Threads)
            {
                ulong cur = Dac.ThreadStaticPointer(first, thread);
                if (cur == 0)
                    continue;
                j.WriteStartObject();
                j.WriteNumber("os_thread_id", thread.OSThreadId);
                j.WriteNumber("managed_thread_id", thread.ManagedThreadId);
                j.WriteBoolean("threadpool_worker", thread.State.HasFlag(ClrThreadState.TS_TPWorkerThread));
                j.WriteStartArray("records");
                var seen = new System.Collections.Generic.HashSet<ulong>();
                // (A value type: field offsets are from the record's start.)
                for (ulong rec = cur; rec != 0 && seen.Add(rec) && seen.Count <= 64; rec = r.ReadPointer(rec + (ulong)fNext.Offset))
                {
                    ulong slot = r.ReadPointer(rec + (ulong)fObj.Offset);
                    ClrObject o = d.Runtime.Heap.GetObject(slot != 0 ? r.ReadPointer(slot) : 0);
                    j.WriteStartObject();
                    j.WriteNumber("kind", r.Read<int>(rec + (ulong)fKind.Offset));
                    j.WriteString("object", o.IsValid ? Hex(o.Address) : null);
                    j.WriteString("type", o.Type?.Name);
                    ulong lockObj = o.Type?.Name == "System.Threading.Lock" ? o.Address
                                    : o.Type?.Name == "System.Threading.Condition" ? o.ReadObjectField("_lock").Address : 0;
                    j.WriteString("lock", lockObj != 0 ? Hex(lockObj) : null);
                    j.WriteNumber("timeout_ms", r.Read<int>(rec + (ulong)fTimeout.Offset));
                    j.WriteEndObject();
                }
                j.WriteEndArray();
                j.WriteEndObject();
            }
            j.WriteEndArray();
        }

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
                WriteBlocking(j, d);
                j.WriteEndObject();
            }
            System.Console.Out.WriteLine(System.Text.Encoding.UTF8.GetString(ms.ToArray()));
            return 0;
        }
    }
}
