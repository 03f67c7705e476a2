// Scenario "deadlock": three chains awaiting each other's tasks in a cycle, plus one bystander.
//
//   DeadA awaits s_b (DeadB's task), DeadB -> DeadBOuter awaits s_c (DeadC's task),
//   DeadC awaits s_a (DeadA's task): A -> B -> C -> A, a deadlock nothing can end.
//   Bystander awaits s_a as well (a caller of the cycle, not part of it).
// Each first awaits s_start, so that all three tasks exist before any of them awaits another.
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class DeadlockApp
    {
        public static readonly TaskCompletionSource s_start = new TaskCompletionSource();
        public static Task<int> s_a = Task.FromResult(0), s_b = Task.FromResult(0), s_c = Task.FromResult(0);
        public static Task<int> s_bystander = Task.FromResult(0);
        public static int s_parked;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> DeadA()
        {
            await s_start.Task;
            Interlocked.Increment(ref s_parked);
            return await s_b + 1; // @await DeadA
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> DeadB()
        {
            await s_start.Task;
            Interlocked.Increment(ref s_parked);
            return await s_c + 1; // @await DeadB
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> DeadBOuter()
        {
            return await DeadB() * 2; // @await DeadBOuter
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> DeadC()
        {
            await s_start.Task;
            Interlocked.Increment(ref s_parked);
            return await s_a + 1; // @await DeadC
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Bystander()
        {
            return await s_a; // @await Bystander
        }

        public static int Main(string[] args)
        {
            s_a = DeadA();
            s_b = DeadBOuter();
            s_c = DeadC();
            s_bystander = Bystander();
            s_start.SetResult();
            SpinWait spin = default;
            while (Volatile.Read(ref s_parked) < 3)
                spin.SpinOnce();
            if (s_a.IsCompleted || s_b.IsCompleted || s_c.IsCompleted || s_bystander.IsCompleted)
            {
                Console.Error.WriteLine("deadlock: a chain completed unexpectedly");
                return 1;
            }
            Sample.Ready("deadlock", "cycle=3");
            Sample.ParkForever();
            GC.KeepAlive(s_bystander);
            return 0;
        }
    }
}
