// oracle threadpool <core> --dac <libmscordaccore.so>
//     Prints ClrMD's view of the managed thread pool (ClrRuntime.ThreadPool) as JSON:
//     {"portable", "min", "max", "active", "idle", "retired", "cpu", "items": [{"queue", "object", "type",
//     "method"}]}; the pool's members only when ClrMD has one. The items as SOS's `threadpool -wi` finds them
//     (through ClrMD's objects and fields): every ThreadPoolWorkQueue's highPriorityWorkItems, workItems and
//     lowPriorityWorkItems (queue "global"), each segment's non-null slots, and every
//     ThreadPoolWorkQueue+WorkStealingQueue's non-null m_array entries (queue "local"); "method": the
//     signature of the delegate the item is, or holds in m_action or _callback (ClrDelegate's target), else null.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class ThreadPoolCommand
    {
        static string? DelegateMethod(ClrObject o)
        {
            if (!o.IsValid || o.IsNull || !o.IsDelegate)
                return null;
            return o.AsDelegate().GetDelegateTarget()?.Method?.Signature;
        }

        static string? Method(ClrObject item)
        {
            string? m = DelegateMethod(item);
            foreach (string field in new[] { "m_action", "_callback" })
                if (m == null && item.Type?.GetFieldByName(field) is ClrInstanceField f && f.IsObjectReference)
                    m = DelegateMethod(item.ReadObjectField(field));
            return m;
        }

        static IEnumerable<ClrObject> QueueItems(ClrObject queue)
        {
            if (!queue.IsValid || queue.IsNull || !queue.TryReadObjectField("_head", out ClrObject seg))
                yield break;
            for (int n = 0; seg.IsValid && !seg.IsNull && n < 65536; n++)
            {
                if (seg.TryReadObjectField("_slots", out ClrObject slots) && slots.IsValid && slots.IsArray)
                {
                    ClrArray a = slots.AsArray();
                    for (int i = 0; i < a.Length; i++)
                    {
                        ClrObject item = a.GetStructValue(i).ReadObjectField("Item");
                        if (item.IsValid && !item.IsNull)
                            yield return item;
                    }
                }
                if (!seg.TryReadObjectField("_nextSegment", out seg))
                    break;
            }
        }

        static IEnumerable<(string, ClrObject)> Items(ClrRuntime rt)
        {
            foreach (ClrObject obj in rt.Heap.EnumerateObjects())
            {
                if (obj.Type?.Name == "System.Threading.ThreadPoolWorkQueue")
                {
                    foreach (string field in new[] { "highPriorityWorkItems", "workItems", "lowPriorityWorkItems" })
                        if (obj.TryReadObjectField(field, out ClrObject q))
                            foreach (ClrObject item in QueueItems(q))
                                yield return ("global", item);
                }
                else if (obj.Type?.Name == "System.Threading.ThreadPoolWorkQueue+WorkStealingQueue" &&
                         obj.TryReadObjectField("m_array", out ClrObject arr) && arr.IsValid && !arr.IsNull && arr.IsArray)
                {
                    ClrArray a = arr.AsArray();
                    for (int i = 0; i < Math.Min(a.Length, 8192); i++)
                    {
                        ClrObject item = a.GetObjectValue(i);
                        if (item.IsValid && !item.IsNull)
                            yield return ("local", item);
                    }
                }
            }
        }

        public static int Run(string[] args)
        {
            var (pos, opt) = Args.Parse(args, "--dac");
            if (pos.Count != 1)
                throw new OracleException("usage: oracle threadpool <core> --dac <libmscordaccore.so>");
            string core = Args.RequireFile(pos[0], "core file");
            using Dac d = Dac.Open(core, Dac.PathOption(opt));
            ClrThreadPool? tp = d.Runtime.ThreadPool;
            var ms = new MemoryStream();
            using (var j = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = true }))
            {
                j.WriteStartObject();
                if (tp != null)
                {
                    j.WriteBoolean("portable", tp.UsingPortableThreadPool);
                    j.WriteNumber("min", tp.MinThreads);
                    j.WriteNumber("max", tp.MaxThreads);
                    j.WriteNumber("active", tp.ActiveWorkerThreads);
                    j.WriteNumber("idle", tp.IdleWorkerThreads);
                    j.WriteNumber("retired", tp.RetiredWorkerThreads);
                    j.WriteNumber("cpu", tp.CpuUtilization);
                }
                j.WriteStartArray("items");
                foreach (var (queue, item) in Items(d.Runtime))
                {
                    j.WriteStartObject();
                    j.WriteString("queue", queue);
                    j.WriteString("object", "0x" + item.Address.ToString("x16"));
                    j.WriteString("type", item.Type?.Name);
                    j.WriteString("method", Method(item));
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
