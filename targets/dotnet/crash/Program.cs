// Scenario "crash": a process that dies of SIGABRT on a worker thread named "crasher" while one
// async chain (Outer -> Inner, awaiting a TaskCompletionSource that never completes) is parked.
//
//   --mode failfast   Validate(-7) throws InvalidOperationException("order -7 is negative"); the
//                     worker catches it and calls Environment.FailFast("crash: cannot go on", e).
//   --mode unhandled  Validate(-9) throws InvalidOperationException("order -9 is negative") and
//                     nothing catches it.
//
// Either way the runtime aborts the process from the crasher thread (SIGABRT) and the thread's
// last thrown object is the InvalidOperationException.
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class CrashApp
    {
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static Task<int>? s_chain;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Outer()
        {
            int r = await Inner(); // @await Outer
            return r + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Inner()
        {
            int r = await s_gate.Task; // @await Inner
            return r + 2;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Validate(int order)
        {
            if (order < 0)
                throw new InvalidOperationException($"order {order} is negative");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void FailFastWorker()
        {
            try
            {
                Validate(Sample.Id(-7));
            }
            catch (InvalidOperationException e)
            {
                Environment.FailFast("crash: cannot go on", e);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void UnhandledWorker()
        {
            Validate(Sample.Id(-9));
        }

        public static int Main(string[] args)
        {
            s_chain = Outer();
            string mode = Sample.Option(args, "--mode", "failfast");
            var worker = new Thread(mode == "unhandled" ? UnhandledWorker : FailFastWorker) { Name = "crasher" };
            Sample.Ready("crash", "mode=" + mode);
            worker.Start();
            worker.Join();
            GC.KeepAlive(s_chain);
            return 0;
        }
    }
}
