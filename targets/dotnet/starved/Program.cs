// Scenario "starved": a completed task whose continuation has not run, because every worker thread
// of a capped thread pool is blocked.
//
//   The pool is capped at 2 workers (SetMinThreads(2) then SetMaxThreads(2)); both run Block, which
//   waits on s_block forever. Waiter awaits s_tcs.Task (RunContinuationsAsynchronously); the main
//   thread completes it, so its continuation is queued on the pool's global queue, where it stays.
//   Three more work items (Noop) are queued behind it: the global queue holds 4 items. The first
//   worker, once both run Block, starts a task (Task.Run from a worker: its local queue), which no
//   worker is free to take: the local queue holds 1 item.
//   --mode classic: ClassicWaiter (a classic state machine, opted out of runtime async) awaits
//   s_tcs.Task too: its box is queued behind Waiter's task, and the global queue holds 5 items.
using System;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.Runtime.CompilerServices
{
    // Recognised by name by the C# compiler: opts one method out of runtime async.
    [AttributeUsage(AttributeTargets.Method, Inherited = false)]
    internal sealed class RuntimeAsyncMethodGenerationAttribute : Attribute
    {
        public RuntimeAsyncMethodGenerationAttribute(bool runtimeAsync)
        {
            RuntimeAsync = runtimeAsync;
        }

        public bool RuntimeAsync { get; }
    }
}

namespace AsyncdacSamples
{
    public static class StarvedApp
    {
        public static readonly ManualResetEventSlim s_block = new ManualResetEventSlim(false);
        public static readonly TaskCompletionSource<int> s_tcs =
            new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        public static int s_started;
        public static Task s_chain = Task.CompletedTask;
        public static Task? s_local;

        static void Block(object? state)
        {
            if (Interlocked.Increment(ref s_started) == 1)
            {
                while (Volatile.Read(ref s_started) < 2)
                    Thread.Sleep(1);
                Volatile.Write(ref s_local, Task.Run(LocalWork)); // both workers busy: nobody steals it
            }
            s_block.Wait();
        }

        static void LocalWork() { }

        static void Noop(object? state) { }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Waiter()
        {
            int v = await s_tcs.Task; // @await Waiter
            return v + 1;
        }

        [RuntimeAsyncMethodGeneration(false)]
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ClassicWaiter()
        {
            int v = await s_tcs.Task; // @await ClassicWaiter
            return v + 2;
        }

        public static int Main(string[] args)
        {
            if (!ThreadPool.SetMinThreads(2, 2) || !ThreadPool.SetMaxThreads(2, 2))
            {
                Console.Error.WriteLine("starved: cannot cap the thread pool at 2 workers");
                return 1;
            }
            ThreadPool.UnsafeQueueUserWorkItem(Block, null);
            ThreadPool.UnsafeQueueUserWorkItem(Block, null);
            while (Volatile.Read(ref s_started) < 2 || Volatile.Read(ref s_local) == null)
                Thread.Sleep(10);
            bool classic = args.SequenceEqual(new[] { "--mode", "classic" });
            s_chain = Waiter();
            Task<int> box = classic ? ClassicWaiter() : Task.FromResult(0);
            s_tcs.SetResult(41);
            for (int i = 0; i < 3; i++)
                ThreadPool.UnsafeQueueUserWorkItem(Noop, null);
            Thread.Sleep(500);
            if (s_chain.IsCompleted || (classic && box.IsCompleted))
            {
                Console.Error.WriteLine("starved: the continuation ran");
                return 1;
            }
            Sample.Ready("starved", classic ? "workers=2 queued=5" : "workers=2 queued=4");
            Sample.ParkForever();
            GC.KeepAlive(s_chain);
            GC.KeepAlive(box);
            return 0;
        }
    }
}
