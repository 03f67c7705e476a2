// Scenario "convoy": many chains awaiting one shared object vs. as many distinct ones, for `ps`
// grouping by what is awaited *by identity*.
//
//   ConvoyTop -> ConvoyWait  x1000  await s_lock.WaitAsync() on one SemaphoreSlim(0) nobody
//                                   releases: 1000 waiters, current count 0
//   GateWait                 x500   each awaits its own TaskCompletionSource<int>.Task (500 distinct)
//   SharedWait               x3     await one TaskCompletionSource<int>.Task (s_shared)
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class ConvoyApp
    {
        public const int Waiters = 1000, Gates = 500, Shared = 3;
        public static readonly SemaphoreSlim s_lock = new SemaphoreSlim(0);
        public static readonly TaskCompletionSource<int> s_shared = new TaskCompletionSource<int>();
        public static readonly List<TaskCompletionSource<int>> s_gates = new List<TaskCompletionSource<int>>(Gates);
        public static readonly List<Task> s_chains = new List<Task>();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ConvoyWait(int id)
        {
            await s_lock.WaitAsync(); // @await ConvoyWait
            return id;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ConvoyTop(int id)
        {
            return await ConvoyWait(id) + 1; // @await ConvoyTop
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GateWait(Task<int> gate)
        {
            return await gate; // @await GateWait
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> SharedWait(int id)
        {
            return await s_shared.Task + id; // @await SharedWait
        }

        public static int Main(string[] args)
        {
            for (int i = 0; i < Waiters; i++)
                s_chains.Add(ConvoyTop(i));
            for (int i = 0; i < Gates; i++)
            {
                var gate = new TaskCompletionSource<int>();
                s_gates.Add(gate);
                s_chains.Add(GateWait(gate.Task));
            }
            for (int i = 0; i < Shared; i++)
                s_chains.Add(SharedWait(i));
            foreach (Task t in s_chains)
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine("convoy: a chain completed unexpectedly");
                    return 1;
                }
            Sample.Ready("convoy", $"waiters={Waiters} gates={Gates} shared={Shared} current_count={s_lock.CurrentCount}");
            Sample.ParkForever();
            GC.KeepAlive(s_chains);
            return 0;
        }
    }
}
