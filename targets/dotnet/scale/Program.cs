// Scenario "scale" (issue 16): N pending chains of depth D over a ballast heap of B MB, for the
// `scripts/bench scale` section. Parameters on the command line (all optional):
//
//   --chains N      pending chains (default 10000)
//   --depth D       frames per chain, >= 2 (default 3)
//   --shape S       plain | deep | shared-tail (default plain)
//   --ballast-mb B  MB of ballast objects kept alive besides the chains (default 0)
//   --group G       shared-tail only: leaf chains per shared tail (default 100)
//
// Callee -> caller order through Continuation.Next:
//
//   plain:       ScaleApp.Leaf -> ScaleApp.Mid x (D - 2) -> ScaleApp.Top
//                (Leaf awaits its own TaskCompletionSource<int>.Task; D = 3 is Leaf -> Mid -> Top)
//   deep:        ScaleApp.Leaf -> ScaleApp.Rec x (D - 2) -> ScaleApp.Top: one recursive method,
//                so every middle frame has the same suspension point
//   shared-tail: N chains ScaleApp.Leaf -> ScaleApp.Mid x (D - 2) -> ScaleApp.Branch, each group of G
//                of them awaited by one Task.WhenAll in ScaleApp.Join, whose task is the gate of a
//                tail chain ScaleApp.Leaf -> ScaleApp.Mid x (D - 2) -> ScaleApp.Top (logical stacks
//                of 2 * D + 1 frames sharing the tail's D + 1)
//
// The ballast is byte[] of 200..712 bytes (a heap of many small objects, like a real service's),
// reachable from a static list so that the GC keeps it.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class ScaleApp
    {
        public static readonly List<object> s_gates = new List<object>();
        public static readonly List<Task> s_chains = new List<Task>();
        public static readonly List<byte[]> s_ballast = new List<byte[]>();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Leaf(int id, Task<int> gate)
        {
            int leafLocal = Sample.Id(id + 100000);
            int r = await gate; // @await Leaf
            return r + leafLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Mid(int id, int level, Task<int> gate)
        {
            long midLocal = Sample.Id((long)id * 2);
            int r = level <= 0 ? await Leaf(id, gate) : await Mid(id, level - 1, gate); // @await Mid
            return r + (int)midLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Rec(int id, int level, Task<int> gate)
        {
            int recLocal = Sample.Id(level);
            int r = level <= 0 ? await Leaf(id, gate) : await Rec(id, level - 1, gate); // @await Rec
            return r + recLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Top(int id, int middles, bool recursive, Task<int> gate)
        {
            string topLocal = Sample.Id("top-" + id);
            int r = middles == 0 ? await Leaf(id, gate)
                  : recursive ? await Rec(id, middles - 1, gate)
                  : await Mid(id, middles - 1, gate); // @await Top
            return r + topLocal.Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Branch(int id, int middles, Task<int> gate)
        {
            int branchLocal = Sample.Id(-id);
            int r = middles == 0 ? await Leaf(id, gate) : await Mid(id, middles - 1, gate); // @await Branch
            return r + branchLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Join(int id, Task<int[]> all)
        {
            int joinLocal = Sample.Id(id);
            int[] r = await all; // @await Join
            return r.Length + joinLocal;
        }

        // The tail: Join awaits the group's WhenAll; the chain Leaf -> Mid x (D - 2) -> Top awaits Join.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Task<int> Tail(int id, int middles, Task<int[]> all)
        {
            Task<int> join = Join(id, all);
            return Top(id, middles, false, join);
        }

        public static int Main(string[] args)
        {
            int chains = int.Parse(Sample.Option(args, "--chains", "10000"));
            int depth = int.Parse(Sample.Option(args, "--depth", "3"));
            string shape = Sample.Option(args, "--shape", "plain");
            int ballastMb = int.Parse(Sample.Option(args, "--ballast-mb", "0"));
            int group = int.Parse(Sample.Option(args, "--group", "100"));
            if (chains < 0 || depth < 2 || ballastMb < 0 || group < 1
                || (shape != "plain" && shape != "deep" && shape != "shared-tail"))
            {
                Console.Error.WriteLine("scale: usage: --chains N --depth D>=2 --shape plain|deep|shared-tail "
                                        + "--ballast-mb B --group G>=1");
                return 2;
            }

            // Ballast first, so that chains and ballast interleave little (the heap pass sees both).
            var rng = new Random(16);
            long ballastBytes = (long)ballastMb * 1000 * 1000, made = 0;
            while (made < ballastBytes)
            {
                var b = new byte[200 + rng.Next(513)];
                s_ballast.Add(b);
                made += b.Length + 24;
            }

            int middles = depth - 2, tails = 0;
            var groupTasks = new List<Task<int>>(group);
            for (int i = 0; i < chains; i++)
            {
                var g = new TaskCompletionSource<int>();
                s_gates.Add(g);
                Task<int> t = shape == "shared-tail" ? Branch(i, middles, g.Task)
                            : Top(i, middles, shape == "deep", g.Task);
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine($"scale: chain {i} completed unexpectedly");
                    return 1;
                }
                if (shape == "shared-tail")
                {
                    groupTasks.Add(t);
                    if (groupTasks.Count == group || i == chains - 1)
                    {
                        s_chains.Add(Tail(tails++, middles, Task.WhenAll(groupTasks)));
                        groupTasks = new List<Task<int>>(group);
                    }
                }
                else
                {
                    s_chains.Add(t);
                }
            }
            Sample.Ready("scale", $"chains={chains} depth={depth} shape={shape} ballast_mb={ballastMb} "
                                  + $"tails={tails} ballast_objects={s_ballast.Count}");
            Sample.ParkForever();
            GC.KeepAlive(s_chains);
            GC.KeepAlive(s_gates);
            GC.KeepAlive(s_ballast);
            return 0;
        }
    }
}
