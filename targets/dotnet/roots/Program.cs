// Scenario "roots": objects kept alive by each kind of GC root, for `gcroot`.
//
//   s_gate      a static TaskCompletionSource<int> that WaitGate awaits (a pending chain)
//   RootsLocal  referenced only from a local of Main, live across ParkForever (a stack slot)
//   RootsStrong referenced only by a strong GCHandle (GCHandle.Alloc)
//   byte[64]    referenced only by a pinned GCHandle (GCHandle.Alloc(..., Pinned))
//   orphan      a TaskCompletionSource<string> that WaitOrphan awaits while nothing references the
//               chain or the source: nothing will ever complete it (no root; no GC runs to free it)
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public sealed class RootsLocal { public int Value = 7; }
    public sealed class RootsStrong { public string Name = "strong"; }
    public sealed class RootsOrphan { public TaskCompletionSource<string> Source = new TaskCompletionSource<string>(); }

    public static class RootsApp
    {
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static Task<int> s_chain = Task.FromResult(0);

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

        public static int Main(string[] args)
        {
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
