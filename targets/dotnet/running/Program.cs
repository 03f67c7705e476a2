// Scenario 5 "running": a chain that is *running* when the process stops.
//
//   RunningApp.RunTop awaits RunningApp.RunMiddle awaits RunningApp.RunLeaf awaits Task.Delay(20)
//
// Task.Delay really suspends the whole chain; the thread pool then resumes RunLeaf through the
// runtime-async dispatcher, so while RunLeaf runs, that thread's AsyncDispatcherInfo.t_current
// record has NextContinuation = RunMiddle's continuation, whose Next is RunTop's continuation.
// The resumed RunLeaf then calls RunningApp.StopHere(mode), which prints the READY line (from the
// running thread; tid= is its OS thread id) and then, by --mode:
//
//   park      (default) blocks forever in RunningApp.ParkRunning (Thread.Sleep) with RunLeaf on the
//             stack, so a debugger, createdump or gcore can take the process while the chain runs
//   sigstop   tgkill(getpid(), gettid(), SIGSTOP): the process stops itself, this thread inside the call
//             (kill() stopped it anywhere after the call); after SIGCONT it parks as in "park"
//   break     System.Diagnostics.Debugger.Break() (SIGTRAP: stops under a debugger, kills the
//             process with a core-dumping signal without one)
//   failfast  Environment.FailFast(message, exception) from the resumed frame: the runtime's crash
//             path (createdump runs if DOTNET_DbgEnableMiniDump=1)
//   throw     an exception escapes an [UnmanagedCallersOnly] callback called (through libc qsort)
//             from the resumed frame: a genuine unhandled-exception crash with RunLeaf on the stack.
//             (A plain `throw` in RunLeaf would not crash: the dispatcher catches it and faults the task.)
//   segv      a write to an unmapped address from the resumed frame (SIGSEGV -> fatal AccessViolation)
//   gcloop    garbage collections back to back (GC.Collect, forever, 300,000 objects to mark) from
//             the resumed frame: a debugger stopping the process often stops it inside one, where
//             the heap cannot be walked
//
// Locals (live across the await and after it): RunLeaf leafLocal = 808, RunMiddle midLocal = 909L,
// RunTop topLocal = "top-running". Lines marked "@await <name>" are the suspension points;
// "@running RunLeaf" is the line of the call to StopHere in the resumed RunLeaf.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class RunningApp
    {
        public static string s_mode = "park";
        public static Task<int>? s_chain;
        public static object[]? s_keep;

        [DllImport("libc", EntryPoint = "tgkill", SetLastError = true)]
        private static extern int TgKill(int pid, int tid, int sig);

        [DllImport("libc", EntryPoint = "gettid")]
        private static extern int GetTid();

        [DllImport("libc", EntryPoint = "qsort")]
        private static extern unsafe void QSort(void* items, nuint count, nuint size, delegate* unmanaged<void*, void*, int> compare);

        private const int SIGSTOP = 19;

        [UnmanagedCallersOnly]
        private static unsafe int ThrowingCompare(void* a, void* b)
        {
            throw new InvalidOperationException("asyncdac running scenario: unhandled exception in a native callback");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ParkRunning()
        {
            Thread.Sleep(Timeout.Infinite);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static unsafe void StopHere(int leafLocal)
        {
            Sample.Ready("running", $"mode={s_mode} tid={GetTid()} chains=1");
            switch (s_mode)
            {
                case "park":
                    break;
                case "sigstop":
                    TgKill(Environment.ProcessId, GetTid(), SIGSTOP);
                    break;
                case "break":
                    Debugger.Break();
                    break;
                case "failfast":
                    Environment.FailFast("asyncdac running scenario: failfast", new InvalidOperationException("running-failfast"));
                    break;
                case "throw":
                    int* items = stackalloc int[2] { 2, 1 };
                    QSort(items, 2, sizeof(int), &ThrowingCompare);
                    break;
                case "segv":
                    *(int*)unchecked((nint)0x7ff0dead0000L) = leafLocal;
                    break;
                case "gcloop":
                    // (objects to mark: most of each collection is then spent marking them)
                    s_keep = new object[300_000];
                    for (int i = 0; i < s_keep.Length; i++)
                        s_keep[i] = new int[4];
                    for (;;)
                        GC.Collect();
            }
            ParkRunning();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunLeaf()
        {
            int leafLocal = Sample.Id(808);  // 808
            await Task.Delay(20); // @await RunLeaf
            StopHere(leafLocal); // @running RunLeaf
            return leafLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunMiddle()
        {
            long midLocal = Sample.Id(909L);  // 909
            int r = await RunLeaf(); // @await RunMiddle
            return r + (int)midLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunTop()
        {
            string topLocal = Sample.Id("top-running");  // "top-running"
            int r = await RunMiddle(); // @await RunTop
            return r + topLocal.Length;
        }

        public static int Main(string[] args)
        {
            s_mode = Sample.Option(args, "--mode", "park");
            if (Array.IndexOf(new[] { "park", "sigstop", "break", "failfast", "throw", "segv", "gcloop" }, s_mode) < 0)
            {
                Console.Error.WriteLine($"running: unknown --mode {s_mode}");
                return 2;
            }
            s_chain = RunTop();
            Sample.ParkForever();
            GC.KeepAlive(s_chain);
            return 0;
        }
    }
}
