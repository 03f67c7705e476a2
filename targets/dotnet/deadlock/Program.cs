// Scenario "deadlock": three chains awaiting each other's tasks in a cycle, plus one bystander.
//
//   DeadA awaits s_b (DeadB's task), DeadB -> DeadBOuter awaits s_c (DeadC's task),
//   DeadC awaits s_a (DeadA's task): A -> B -> C -> A, a deadlock nothing can end.
//   Bystander awaits s_a as well (a caller of the cycle, not part of it).
// Each first awaits s_start, so that all three tasks exist before any of them awaits another.
// And sync-over-async under a lock, the other usual deadlock: thread "guard" runs
//   lock (s_guard) { GuardedTop().Wait(); }, while GuardedTop -> GuardedLeaf, resumed on a thread-pool
//   thread after an await (Task.Yield), blocks in lock (s_guard): the guard thread waits for the
//   task whose chain runs on the pool thread, which waits for the lock the guard thread holds.
// READY: cycle=3 guard=<managed thread id> guardpool=<managed thread id of the pool thread>
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
        public static readonly object s_guard = new object();
        public static Task<int> s_guarded = Task.FromResult(0);
        static volatile Thread? s_guardPool;
        static volatile bool s_guardIn;

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

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GuardedLeaf()
        {
            await Task.Yield();
            s_guardPool = Thread.CurrentThread;
            lock (s_guard) // @lock GuardedLeaf
                return 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GuardedTop()
        {
            return await GuardedLeaf() + 1; // @await GuardedTop
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Guard()
        {
            lock (s_guard)
            {
                s_guarded = GuardedTop();
                s_guardIn = true;
                s_guarded.Wait();
            }
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
            var guard = new Thread(Guard) { Name = "guard", IsBackground = true };
            guard.Start();
            while (!s_guardIn || s_guardPool == null)
                Thread.Sleep(1);
            Sample.WaitBlocked(guard);
            Sample.WaitBlocked(s_guardPool);
            Sample.Ready("deadlock", $"cycle=3 guard={guard.ManagedThreadId} guardpool={s_guardPool.ManagedThreadId}");
            Sample.ParkForever();
            GC.KeepAlive(s_bystander);
            return 0;
        }
    }
}
