// Scenario "locks": threads holding locks and threads waiting for them, and a lock held across a
// synchronous wait for an async chain (sync-over-async under a lock: a hang's usual shape).
//
//   thread "holder"       lock (s_monitor) { LockedTop().Wait(); }: holds s_monitor (a Monitor on an
//                         object) and waits synchronously for LockedTop -> LockedLeaf, which awaits
//                         s_gate (a TaskCompletionSource never completed)
//   "waiter-1", "waiter-2" lock (s_monitor): blocked, so the lock is inflated to a sync block
//   thread "nested"       lock (s_thin) { lock (s_thin) { park } }: entered twice, nobody waits: a thin
//                         lock in the object's header
//   thread "scope"        using (s_lock.EnterScope()) { park }: a System.Threading.Lock held
//   thread "lock-waiter"  s_lock.Enter(): waits for it
//   threads "ab", "ba"    lock (s_a) { lock (s_b) } and lock (s_b) { lock (s_a) }, each holding its first
//                         lock when it takes the second: a deadlock
//   ResumeTop -> LockedResume: after an await (Task.Yield), LockedResume runs on a thread-pool thread
//                         and blocks in lock (s_monitor): a running chain (ResumeTop) whose thread waits
//                         for a lock
//   thread "pulse-waiter" lock (s_signal) Monitor.Wait(s_signal): waits for a pulse that never comes
//                         (the Monitor is not held while it waits)
//   thread "timed-waiter" lock (s_held) Monitor.Wait(s_held, 3600000): the same with a timeout, while
//   thread "signaller"    lock (s_held) { park }: holds the Monitor the timed waiter waits on
//   PulseTop -> PulseResume: after an await (Task.Yield), PulseResume runs on a thread-pool thread and
//                         waits in Monitor.Wait(s_poolSignal): a running chain whose thread waits for a
//                         pulse
//   thread "sem-waiter"   s_sem.Wait(): a SemaphoreSlim's synchronous wait, Monitor.Wait on its lock object
// READY gives the managed thread ids: holder=N nested=N scope=N waiters=N,N lockwaiter=N ab=N ba=N pool=N
// pulse=N timed=N signaller=N pulsepool=N semwaiter=N
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class LocksApp
    {
        public sealed class Gate
        {
            public int Uses;
        }

        public sealed class Signal
        {
            public int Pulses;
        }

        public const int TimedWaitMs = 3_600_000;
        public static readonly object s_monitor = new object();
        public static readonly Signal s_signal = new Signal(), s_held = new Signal(), s_poolSignal = new Signal();
        static volatile bool s_signallerIn;
        static volatile Thread? s_pulsePool;
        public static readonly SemaphoreSlim s_sem = new SemaphoreSlim(0);
        public static readonly Gate s_thin = new Gate();
        public static readonly Lock s_lock = new Lock();
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static readonly Gate s_a = new Gate(), s_b = new Gate();
        static volatile bool s_nestedIn, s_scopeIn, s_holderIn;
        static readonly Barrier s_both = new Barrier(2);
        static volatile Thread? s_pool;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> LockedLeaf()
        {
            return await s_gate.Task + 1; // @await LockedLeaf
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> LockedTop()
        {
            return await LockedLeaf() * 2; // @await LockedTop
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Holder()
        {
            lock (s_monitor)
            {
                Task<int> t = LockedTop();
                s_holderIn = true;
                t.Wait();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Waiter()
        {
            lock (s_monitor)
                s_thin.Uses++;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Nested()
        {
            lock (s_thin)
            {
                lock (s_thin)
                {
                    s_nestedIn = true;
                    Sample.ParkForever();
                }
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Scope()
        {
            using (s_lock.EnterScope())
            {
                s_scopeIn = true;
                Sample.ParkForever();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void LockWaiter()
        {
            s_lock.Enter();
            s_lock.Exit();
        }

        // Takes first, then (once the other thread holds its first) second.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Crossed(object first, object second)
        {
            lock (first)
            {
                s_both.SignalAndWait();
                lock (second)
                    s_thin.Uses++;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task LockedResume()
        {
            await Task.Yield();
            s_pool = Thread.CurrentThread;
            lock (s_monitor) // @lock LockedResume
                s_thin.Uses++;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task ResumeTop()
        {
            await LockedResume(); // @await ResumeTop
            s_thin.Uses++;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void PulseWaiter()
        {
            lock (s_signal)
                Monitor.Wait(s_signal);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void TimedWaiter()
        {
            lock (s_held)
                Monitor.Wait(s_held, TimedWaitMs);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Signaller()
        {
            lock (s_held)
            {
                s_signallerIn = true;
                Sample.ParkForever();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task PulseResume()
        {
            await Task.Yield();
            s_pulsePool = Thread.CurrentThread;
            lock (s_poolSignal)
                Monitor.Wait(s_poolSignal); // @wait PulseResume
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task PulseTop()
        {
            await PulseResume(); // @await PulseTop
            s_thin.Uses++;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void SemWaiter()
        {
            s_sem.Wait();
        }

        static Thread Start(ThreadStart body, string name)
        {
            var th = new Thread(body) { Name = name, IsBackground = true };
            th.Start();
            return th;
        }

        public static int Main(string[] args)
        {
            Thread holder = Start(Holder, "holder");
            Thread nested = Start(Nested, "nested");
            Thread scope = Start(Scope, "scope");
            while (!s_holderIn || !s_nestedIn || !s_scopeIn)
                Thread.Sleep(1);
            Thread w1 = Start(Waiter, "waiter-1");
            Thread w2 = Start(Waiter, "waiter-2");
            Thread lw = Start(LockWaiter, "lock-waiter");
            Thread ab = Start(() => Crossed(s_a, s_b), "ab");
            Thread ba = Start(() => Crossed(s_b, s_a), "ba");
            Task resumed = ResumeTop();
            Task pulsed = PulseTop();
            while (s_pool == null || s_pulsePool == null)
                Thread.Sleep(1);
            Thread pulse = Start(PulseWaiter, "pulse-waiter");
            Thread sem = Start(SemWaiter, "sem-waiter");
            Thread timed = Start(TimedWaiter, "timed-waiter");
            Sample.WaitBlocked(timed); // (in Monitor.Wait: s_held is free for the signaller)
            Thread signaller = Start(Signaller, "signaller");
            while (!s_signallerIn)
                Thread.Sleep(1);
            foreach (Thread th in new[] { holder, w1, w2, lw, ab, ba, s_pool, pulse, s_pulsePool, sem })
                Sample.WaitBlocked(th);
            Sample.Ready("locks", $"holder={holder.ManagedThreadId} nested={nested.ManagedThreadId} " +
                                  $"scope={scope.ManagedThreadId} waiters={w1.ManagedThreadId},{w2.ManagedThreadId} " +
                                  $"lockwaiter={lw.ManagedThreadId} ab={ab.ManagedThreadId} ba={ba.ManagedThreadId} " +
                                  $"pool={s_pool.ManagedThreadId} pulse={pulse.ManagedThreadId} " +
                                  $"timed={timed.ManagedThreadId} signaller={signaller.ManagedThreadId} " +
                                  $"pulsepool={s_pulsePool.ManagedThreadId} semwaiter={sem.ManagedThreadId}");
            GC.KeepAlive(resumed);
            GC.KeepAlive(pulsed);
            Sample.ParkForever();
            return 0;
        }
    }
}
