// oracle threadpool <core> --dac <libmscordaccore.so>
//     Prints ClrMD's view of the managed thread pool (ClrRuntime.ThreadPool) as JSON:
//     {"portable", "min", "max", "active", "idle", "retired"}; {} when ClrMD has none.
using System.IO;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Oracle
{
    internal static class ThreadPoolCommand
    {
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
                }
                j.WriteEndObject();
            }
            System.Console.Out.WriteLine(System.Text.Encoding.UTF8.GetString(ms.ToArray()));
            return 0;
        }
    }
}
