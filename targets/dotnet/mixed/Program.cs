// Scenario 6 "mixed": classic state-machine async and runtime async calling each other.
//
// Three assemblies: RaLib (runtime async on) <- MixedClassic (runtime async OFF: classic state
// machines) <- mixed (runtime async on, this file). Chains, callee -> caller:
//
//   "ra-classic-ra"       RaLib.RaLeaf (RA) -> Classic.ClassicMiddle (classic) -> MixedApp.RaTop (RA)
//   "classic-ra-classic"  Classic.ClassicLeaf (classic) -> RaLib.RaMiddle (RA) -> Classic.ClassicTop (classic)
//   "opt-out"             MixedApp.RaLeaf2 (RA) -> MixedApp.OptedOutMiddle (classic, opted out in this
//                         runtime-async assembly with [RuntimeAsyncMethodGeneration(false)]) -> MixedApp.RaTop2 (RA)
//
// A classic frame is not a Continuation: it is an AsyncStateMachineBox (a Task) that sits between two
// runtime-async segments. So through Continuation.Next the runtime-async segments are separate chains:
// [RaLeaf], [RaTop], [RaMiddle], [RaLeaf2], [RaTop2] (each headed by a RuntimeAsyncTaskContinuation that
// waits for the task it awaits). Lines marked "@await <name>" are the suspension points.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace System.Runtime.CompilerServices
{
    // Recognised by name by the C# compiler: opts one method out of runtime async.
    [AttributeUsage(AttributeTargets.Method, Inherited = false)]
    internal sealed class RuntimeAsyncMethodGenerationAttribute : Attribute
    {
        public RuntimeAsyncMethodGenerationAttribute(bool runtimeAsync)
        {
            RuntimeAsync = runtimeAsync;
        }

        public bool RuntimeAsync { get; }
    }
}

namespace AsyncdacSamples
{
    public static class MixedApp
    {
        public static readonly List<TaskCompletionSource<int>> s_gates = new List<TaskCompletionSource<int>>();
        public static readonly List<Task> s_chains = new List<Task>();

        private static Task<int> Gate()
        {
            var tcs = new TaskCompletionSource<int>();
            s_gates.Add(tcs);
            return tcs.Task;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RaTop(Task<int> gate)
        {
            int raTopLocal = Sample.Id(6001);  // 6001
            int r = await Classic.ClassicMiddle(gate); // @await RaTop
            return r + raTopLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RaLeaf2(Task<int> gate)
        {
            int raLeaf2Local = Sample.Id(6002);  // 6002
            int r = await gate; // @await RaLeaf2
            return r + raLeaf2Local;
        }

        [RuntimeAsyncMethodGeneration(false)]
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> OptedOutMiddle(Task<int> gate)
        {
            int optedOutLocal = 6003;  // 6003
            int r = await RaLeaf2(gate); // @await OptedOutMiddle
            return r + optedOutLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RaTop2(Task<int> gate)
        {
            int raTop2Local = Sample.Id(6004);  // 6004
            int r = await OptedOutMiddle(gate); // @await RaTop2
            return r + raTop2Local;
        }

        public static int Main(string[] args)
        {
            s_chains.Add(RaTop(Gate()));
            s_chains.Add(Classic.ClassicTop(Gate()));
            s_chains.Add(RaTop2(Gate()));
            foreach (Task t in s_chains)
            {
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine("mixed: a chain completed unexpectedly");
                    return 1;
                }
            }
            Sample.Ready("mixed", $"chains={s_chains.Count}");
            Sample.ParkForever();
            GC.KeepAlive(s_chains);
            return 0;
        }
    }
}
