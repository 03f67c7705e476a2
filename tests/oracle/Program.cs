// asyncdac oracle: independent ground truth for runtime-async continuation chains.
//
//   oracle [dump] <core> --dac <libmscordaccore.so> --out <file.json> [--no-pdb]
//       Opens the core with ClrMD + Microsoft's DAC and writes every Continuation-derived heap object,
//       the method (per the DAC) containing each DiagnosticIP, the tasks whose m_stateObject is a
//       continuation, the chains (head -> ... through Next), and the per-thread dispatcher chain
//       (AsyncDispatcherInfo.t_current) where it can be read.
//   oracle check-async <dll> [!]<Namespace.Type>::<Method> ... [<dll> ...]
//       Exit 0 iff every named method has (or, with '!', lacks) MethodImplOptions.Async (0x2000).
//   oracle metadata <dll> <Namespace.Type[+Nested]> ... | --grep <substring>
//       Prints the metadata of the named types: base type, layout, fields in declaration order with
//       their types, offsets and constant values, nested types and methods (with impl flags).
//   oracle threadpool <core> --dac <libmscordaccore.so>
//       ClrMD's view of the managed thread pool (ThreadPoolCommand.cs).
//   oracle locks <core> --dac <libmscordaccore.so>
//       ClrMD's sync blocks and thin locks (LocksCommand.cs).
//   oracle threads <core> --dac <libmscordaccore.so>
//       ClrMD's managed threads (ThreadsCommand.cs).
using System;
using System.Collections.Generic;
using System.IO;

namespace Asyncdac.Oracle
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            try
            {
                if (args.Length == 0 || args[0] is "-h" or "--help")
                {
                    Console.Error.WriteLine("usage: oracle [dump] <core> --dac <libmscordaccore.so> --out <file.json>\n" +
                                            "       oracle check-async <dll> [!]Type::Method ...\n" +
                                            "       oracle metadata <dll> <Type> ... | --grep <substring>");
                    return 2;
                }
                switch (args[0])
                {
                    case "check-async":
                        return MetadataCommands.CheckAsync(args[1..]);
                    case "metadata":
                        return MetadataCommands.Describe(args[1..]);
                    case "dump":
                        return DumpCommand.Run(args[1..]);
                    case "heap":
                        return HeapCommand.Run(args[1..]);
                    case "objects":
                        return ObjectsCommand.Run(args[1..]);
                    case "threadpool":
                        return ThreadPoolCommand.Run(args[1..]);
                    case "locks":
                        return LocksCommand.Run(args[1..]);
                    case "threads":
                        return ThreadsCommand.Run(args[1..]);
                    default:
                        return DumpCommand.Run(args);
                }
            }
            catch (OracleException e)
            {
                Console.Error.WriteLine("oracle: error: " + e.Message);
                return 1;
            }
        }
    }

    public sealed class OracleException : Exception
    {
        public OracleException(string message) : base(message) { }
    }

    internal static class Args
    {
        public static (List<string> positional, Dictionary<string, string?> options) Parse(string[] args, params string[] flagsWithValue)
        {
            var positional = new List<string>();
            var options = new Dictionary<string, string?>();
            for (int i = 0; i < args.Length; i++)
            {
                string a = args[i];
                if (a.StartsWith("--", StringComparison.Ordinal))
                {
                    if (Array.IndexOf(flagsWithValue, a) >= 0)
                    {
                        if (i + 1 >= args.Length)
                            throw new OracleException($"{a} needs a value");
                        options[a] = args[++i];
                    }
                    else
                    {
                        options[a] = null;
                    }
                }
                else
                {
                    positional.Add(a);
                }
            }
            return (positional, options);
        }

        public static string RequireFile(string path, string what)
        {
            if (!File.Exists(path))
                throw new OracleException($"{what} not found: {path}");
            return path;
        }
    }
}
