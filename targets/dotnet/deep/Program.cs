// Scenario 2 "deep": one 1,000-deep recursive chain.
//
//   DeepApp.Recurse(999) awaits Recurse(998) awaits ... awaits Recurse(0) awaits s_gate.Task (never completed)
//
// Callee -> caller order through Continuation.Next: Recurse(depth=0), Recurse(depth=1), ..., Recurse(depth=999):
// exactly 1000 runtime-created continuations, all for DeepApp.Recurse. In frame k (k-th from the head,
// 0-based) the argument `depth` is k and the local `marker` is k * 3 + 1 (both live across the await).
// Lines marked "@await <name>" are the suspension points recorded in expected.json.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class DeepApp
    {
        public const int Depth = 1000;
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static Task<int>? s_chain;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Recurse(int depth)
        {
            int marker = Sample.Id(depth * 3 + 1);  // depth * 3 + 1
            int r;
            if (depth == 0)
                r = await s_gate.Task; // @await Recurse.leaf
            else
                r = await Recurse(depth - 1); // @await Recurse.inner
            Sample.Use(depth);
            return r + marker;
        }

        public static int Main(string[] args)
        {
            s_chain = Recurse(Depth - 1);
            if (s_chain.IsCompleted)
            {
                Console.Error.WriteLine("deep: chain completed unexpectedly");
                return 1;
            }
            Sample.Ready("deep", $"chains=1 depth={Depth}");
            Sample.ParkForever();
            GC.KeepAlive(s_chain);
            return 0;
        }
    }
}
