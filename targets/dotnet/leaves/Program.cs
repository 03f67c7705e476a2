// Scenario "leaves": chains parked on each kind of leaf `ps` classifies.
//
//   WaitDelay      awaits Task.Delay(600000)                 (a DelayPromise; its timer due in 600000 ms)
//   WaitAll        awaits Task.WhenAll(done1, done2, s_gate.Task)   (2 of 3 done)
//   WaitAny        awaits Task.WhenAny(s_gate.Task, s_gate2.Task)   (none done)
//   WaitSemaphore  x3 await s_sem.WaitAsync() on a SemaphoreSlim(0): three waiters
//   WaitGate       awaits s_gate.Task (a TaskCompletionSource that never completes)
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class LeavesApp
    {
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static readonly TaskCompletionSource<int> s_gate2 = new TaskCompletionSource<int>();
        public static readonly SemaphoreSlim s_sem = new SemaphoreSlim(0);
        public static Task[] s_chains = Array.Empty<Task>();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitDelay()
        {
            await Task.Delay(600000); // @await WaitDelay
            return 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitAll()
        {
            int[] r = await Task.WhenAll(Task.FromResult(1), Task.FromResult(2), s_gate.Task); // @await WaitAll
            return r.Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitAny()
        {
            Task<int> first = await Task.WhenAny(s_gate.Task, s_gate2.Task); // @await WaitAny
            return first.Result;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitSemaphore(int id)
        {
            await s_sem.WaitAsync(); // @await WaitSemaphore
            return id;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitGate()
        {
            return await s_gate.Task; // @await WaitGate
        }

        public static int Main(string[] args)
        {
            s_chains = new Task[] { WaitDelay(), WaitAll(), WaitAny(), WaitSemaphore(1), WaitSemaphore(2), WaitSemaphore(3), WaitGate() };
            foreach (Task t in s_chains)
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine("leaves: a chain completed unexpectedly");
                    return 1;
                }
            Sample.Ready("leaves", "chains=" + s_chains.Length);
            Sample.ParkForever();
            GC.KeepAlive(s_chains);
            return 0;
        }
    }
}
