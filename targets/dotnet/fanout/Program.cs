// Scenario 3 "fanout": 10,000 independent pending chains in three shapes, each chain awaiting its
// own never-completed task. Callee -> caller order through Continuation.Next:
//
//   shape Alpha, 5000 chains: FanoutApp.AlphaLeaf -> FanoutApp.AlphaMid -> FanoutApp.AlphaTop
//                             (AlphaLeaf awaits its own TaskCompletionSource<int>.Task)
//   shape Beta,  3000 chains: FanoutApp.BetaLeaf -> FanoutApp.BetaTop
//                             (BetaLeaf awaits its own non-generic TaskCompletionSource.Task)
//   shape Gamma, 2000 chains: FanoutApp.AlphaLeaf -> FanoutApp.GammaTop
//                             (same leaf method as Alpha, different caller)
//
// Chain i (0-based, in creation order) has shape Alpha for i % 10 in 0..4, Beta for 5..7, Gamma for
// 8..9; its `id` argument is i in every frame. Lines marked "@await <name>" are the suspension points.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class FanoutApp
    {
        public const int Chains = 10000;
        public static readonly List<object> s_gates = new List<object>(Chains);
        public static readonly List<Task> s_chains = new List<Task>(Chains);

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> AlphaLeaf(int id, Task<int> gate)
        {
            int leafLocal = Sample.Id(id + 100000);  // id + 100000
            int r = await gate; // @await AlphaLeaf
            return r + leafLocal + id;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> AlphaMid(int id, Task<int> gate)
        {
            long midLocal = Sample.Id((long)id * 2);  // id * 2
            int r = await AlphaLeaf(id, gate); // @await AlphaMid
            return r + (int)midLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> AlphaTop(int id, Task<int> gate)
        {
            string topLocal = Sample.Id("alpha-" + id);  // "alpha-<id>"
            int r = await AlphaMid(id, gate); // @await AlphaTop
            return r + topLocal.Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task BetaLeaf(int id, Task gate)
        {
            double leafLocal = Sample.Id(id + 0.5);  // id + 0.5
            await gate; // @await BetaLeaf
            Sample.Use(leafLocal);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> BetaTop(int id, Task gate)
        {
            object topLocal = Sample.Id<object>(id);  // boxed int id
            await BetaLeaf(id, gate); // @await BetaTop
            return (int)topLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GammaTop(int id, Task<int> gate)
        {
            int topLocal = Sample.Id(-id);  // -id
            int r = await AlphaLeaf(id, gate); // @await GammaTop
            return r + topLocal;
        }

        public static int Main(string[] args)
        {
            for (int i = 0; i < Chains; i++)
            {
                int shape = i % 10;
                Task t;
                if (shape < 5)
                {
                    var g = new TaskCompletionSource<int>();
                    s_gates.Add(g);
                    t = AlphaTop(i, g.Task);
                }
                else if (shape < 8)
                {
                    var g = new TaskCompletionSource();
                    s_gates.Add(g);
                    t = BetaTop(i, g.Task);
                }
                else
                {
                    var g = new TaskCompletionSource<int>();
                    s_gates.Add(g);
                    t = GammaTop(i, g.Task);
                }
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine($"fanout: chain {i} completed unexpectedly");
                    return 1;
                }
                s_chains.Add(t);
            }
            Sample.Ready("fanout", $"chains={Chains} alpha=5000 beta=3000 gamma=2000");
            Sample.ParkForever();
            GC.KeepAlive(s_chains);
            return 0;
        }
    }
}
