// oracle heap: ground truth for the GC heap walk (issue 6), read through Microsoft's DAC (ClrMD).
//
//   oracle heap <core> --dac <libmscordaccore.so> [--out <file.json>] [--no-objects]
//
// Writes what ClrMD's heap enumeration (ClrHeap.EnumerateObjects, which walks the DAC's segments
// and skips the allocation contexts the DAC reports) sees:
//   - "segments": every segment/region ClrMD walks (kind, object range, flags, heap index);
//   - "allocation_contexts": the [pointer, limit) ranges it skips;
//   - "objects": [address, MT, size] of every non-free object, in enumeration order (omitted
//     with --no-objects, for timing);
//   - "free": count and bytes of free objects (FreeObjectMethodTable);
//   - "stats": per MT count, total size and type name, sorted by total size as `dumpheap -stat`;
//   - "elapsed_ms": wall time of the enumeration alone (for scripts/bench).
// An object whose type ClrMD cannot resolve is listed with "bad_objects" (ClrMD then stops
// walking that segment) and counted in "stats" under its raw MT.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class HeapCommand
    {
        private sealed class MtStat
        {
            public long Count;
            public ulong Size;
            public string? Name;
        }

        public static int Run(string[] argv)
        {
            var (pos, opt) = Args.Parse(argv, "--dac", "--out");
            if (pos.Count != 1)
                throw new OracleException("usage: oracle heap <core> --dac <libmscordaccore.so> [--out <file.json>] [--no-objects]");
            string core = Args.RequireFile(pos[0], "core file");
            string dac = Dac.PathOption(opt);
            string? outPath = opt.GetValueOrDefault("--out");
            bool withObjects = !opt.ContainsKey("--no-objects");

            using (Dac d = Dac.Open(core, dac))
            {
                DataTarget dt = d.Target;
                ClrHeap heap = d.Runtime.Heap;
                ulong freeMt = heap.FreeType.MethodTable;
                var stats = new Dictionary<ulong, MtStat>();
                var objects = new List<(ulong Addr, ulong Mt, ulong Size)>();
                var bad = new List<(ulong Addr, ulong Mt)>();
                long freeCount = 0;
                ulong freeSize = 0;

                var sw = Stopwatch.StartNew();
                foreach (ClrObject obj in heap.EnumerateObjects())
                {
                    ClrType? type = obj.Type;
                    ulong mt = type?.MethodTable ?? dt.DataReader.ReadPointer(obj.Address);
                    if (type is null)
                    {
                        bad.Add((obj.Address, mt));
                        continue;
                    }
                    ulong size = obj.Size;
                    if (mt == freeMt)
                    {
                        freeCount++;
                        freeSize += size;
                        continue;
                    }
                    if (!stats.TryGetValue(mt, out MtStat? s))
                        stats[mt] = s = new MtStat();
                    s.Count++;
                    s.Size += size;
                    if (withObjects)
                        objects.Add((obj.Address, mt, size));
                }
                sw.Stop();

                foreach (var kv in stats)
                    kv.Value.Name = heap.GetTypeByMethodTable(kv.Key)?.Name;

                var ms = new MemoryStream();
                using (var j = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = false }))
                {
                    j.WriteStartObject();
                    j.WriteString("core", core);
                    j.WriteBoolean("can_walk", heap.CanWalkHeap);
                    j.WriteBoolean("server", heap.IsServer);
                    j.WriteNumber("subheaps", heap.SubHeaps.Length);
                    j.WriteString("free_mt", Hex(freeMt));
                    j.WriteNumber("elapsed_ms", sw.Elapsed.TotalMilliseconds);

                    j.WriteStartArray("segments");
                    foreach (ClrSegment seg in heap.Segments)
                    {
                        j.WriteStartObject();
                        j.WriteString("address", Hex(seg.Address));
                        j.WriteString("kind", seg.Kind.ToString());
                        j.WriteNumber("heap", seg.SubHeap.Index);
                        j.WriteString("start", Hex(seg.ObjectRange.Start));
                        j.WriteString("end", Hex(seg.ObjectRange.End));
                        j.WriteString("committed_end", Hex(seg.CommittedMemory.End));
                        j.WriteString("reserved_end", Hex(seg.ReservedMemory.End));
                        j.WriteString("flags", Hex((ulong)seg.Flags));
                        j.WriteEndObject();
                    }
                    j.WriteEndArray();

                    j.WriteStartArray("allocation_contexts");
                    foreach (MemoryRange r in heap.EnumerateAllocationContexts().OrderBy(r => r.Start))
                    {
                        j.WriteStartArray();
                        j.WriteStringValue(Hex(r.Start));
                        j.WriteStringValue(Hex(r.End));
                        j.WriteEndArray();
                    }
                    j.WriteEndArray();

                    j.WriteStartObject("free");
                    j.WriteNumber("count", freeCount);
                    j.WriteNumber("size", freeSize);
                    j.WriteEndObject();

                    j.WriteStartArray("bad_objects");
                    foreach (var (addr, mt) in bad)
                    {
                        j.WriteStartArray();
                        j.WriteStringValue(Hex(addr));
                        j.WriteStringValue(Hex(mt));
                        j.WriteEndArray();
                    }
                    j.WriteEndArray();

                    j.WriteNumber("object_count", stats.Values.Sum(s => s.Count));
                    j.WriteNumber("total_size", stats.Values.Aggregate(0UL, (a, s) => a + s.Size));
                    j.WriteStartArray("stats");
                    foreach (var kv in stats.OrderBy(kv => kv.Value.Size).ThenBy(kv => kv.Key))
                    {
                        j.WriteStartObject();
                        j.WriteString("mt", Hex(kv.Key));
                        j.WriteNumber("count", kv.Value.Count);
                        j.WriteNumber("size", kv.Value.Size);
                        j.WriteString("name", kv.Value.Name);
                        j.WriteEndObject();
                    }
                    j.WriteEndArray();

                    if (withObjects)
                    {
                        j.WriteStartArray("objects");
                        foreach (var (addr, mt, size) in objects)
                        {
                            j.WriteStartArray();
                            j.WriteStringValue(Hex(addr));
                            j.WriteStringValue(Hex(mt));
                            j.WriteNumberValue(size);
                            j.WriteEndArray();
                        }
                        j.WriteEndArray();
                    }
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
                Console.Error.WriteLine($"oracle heap: {stats.Values.Sum(s => s.Count)} objects, {freeCount} free, " +
                                        $"{bad.Count} unresolved, {heap.Segments.Length} segments, " +
                                        $"{sw.Elapsed.TotalMilliseconds:F0} ms" + (outPath != null ? $" -> {outPath}" : ""));
            }
            return 0;
        }

        private static string Hex(ulong v) => "0x" + v.ToString("x");
    }
}
