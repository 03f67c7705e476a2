// Scenario "roots": objects kept alive by each kind of GC root, for `gcroot`.
//
//   s_gate      a static TaskCompletionSource<int> that WaitGate awaits (a pending chain)
//   RootsLocal  referenced only from a local of Main, live across ParkForever (a stack slot)
//   RootsStrong referenced only by a strong GCHandle (GCHandle.Alloc)
//   byte[64]    referenced only by a pinned GCHandle (GCHandle.Alloc(..., Pinned))
//   orphan      a TaskCompletionSource<string> that WaitOrphan awaits while nothing references the
//               chain or the source: nothing will ever complete it (no root; no GC runs after it)
//   RootsValue  kept alive only through a dependent handle: s_table (a ConditionalWeakTable) maps the
//               static s_key to it
//   RootsFinalizable  unreachable garbage with a finalizer, on the finalization queue's ready list for
//               good: the finalizer thread is stuck in RootsBlocker's finalizer, which ran first
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public sealed class RootsLocal { public int Value = 7; }
    public sealed class RootsStrong { public string Name = "strong"; }
    public sealed class RootsOrphan { public TaskCompletionSource<string> Source = new TaskCompletionSource<string>(); }
    public sealed class RootsKey { }
    public sealed class RootsValue { public int Value = 11; }

    public sealed class RootsBlocker
    {
        public static readonly ManualResetEventSlim s_running = new ManualResetEventSlim();
        ~RootsBlocker()
        {
            s_running.Set();
            Thread.Sleep(Timeout.Infinite);
        }
    }

    public sealed class RootsFinalizable
    {
        public int Value = 13;
        ~RootsFinalizable() { Value = 0; }
    }

    public static class RootsApp
    {
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static Task<int> s_chain = Task.FromResult(0);
        public static readonly ConditionalWeakTable<RootsKey, RootsValue> s_table = new ConditionalWeakTable<RootsKey, RootsValue>();
        public static readonly RootsKey s_key = new RootsKey();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitGate()
        {
            return await s_gate.Task; // @await WaitGate
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<string> WaitOrphan(RootsOrphan o)
        {
            return await o.Source.Task; // @await WaitOrphan
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void StartOrphan()
        {
            WaitOrphan(new RootsOrphan());
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Garbage(bool blocker)
        {
            if (blocker)
                new RootsBlocker();
            else
                new RootsFinalizable();
        }

        public static int Main(string[] args)
        {
            // First stop the finalizer thread in RootsBlocker's finalizer, then make a RootsFinalizable
            // that stays ready for finalization; every later object survives (no GC runs after this).
            Garbage(true);
            GC.Collect();
            RootsBlocker.s_running.Wait();
            Garbage(false);
            GC.Collect();
            s_table.Add(s_key, new RootsValue());
            s_chain = WaitGate();
            StartOrphan();
            RootsLocal local = new RootsLocal();
            GCHandle strong = GCHandle.Alloc(new RootsStrong());
            GCHandle pinned = GCHandle.Alloc(new byte[64], GCHandleType.Pinned);
            Sample.Ready("roots", "chains=2");
            Sample.ParkForever();
            GC.KeepAlive(local);
            strong.Free();
            pinned.Free();
            return 0;
        }
    }
}
