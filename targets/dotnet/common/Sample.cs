// Shared helpers for the asyncdac sample apps (compiled into every scenario assembly).
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace AsyncdacSamples
{
    public static class Sample
    {
#if DEBUG
        public const string Config = "Debug";
#else
        public const string Config = "Release";
#endif

        // Prints the one READY line (flushed) that scripts/run-sample waits for.
        public static void Ready(string scenario, string extra = "")
        {
            string line = $"READY pid={Environment.ProcessId} scenario={scenario} config={Config} runtime={Environment.Version}";
            if (extra.Length != 0)
                line += " " + extra;
            Console.Out.Write(line + "\n");
            Console.Out.Flush();
        }

        // Parks the calling thread forever.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ParkForever()
        {
            Thread.Sleep(Timeout.Infinite);
        }

        // Value laundering: the JIT cannot constant-fold a value that came through here,
        // so locals initialised from Id(...) really have to be saved in the continuation.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static T Id<T>(T value) => value;

        // Consumes a value after an await so that it is live across the await.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Use<T>(T value) => GC.KeepAlive(value);

        // Returns once th is blocked in a wait, not passing through one while it spins: in
        // WaitSleepJoin at every look for 300 ms.
        public static void WaitBlocked(Thread th)
        {
            int seen = 0;
            while (seen < 30)
            {
                seen = (th.ThreadState & ThreadState.WaitSleepJoin) != 0 ? seen + 1 : 0;
                Thread.Sleep(10);
            }
        }

        public static string Option(string[] args, string name, string fallback)
        {
            for (int i = 0; i + 1 < args.Length; i++)
                if (args[i] == name)
                    return args[i + 1];
            return fallback;
        }
    }
}
