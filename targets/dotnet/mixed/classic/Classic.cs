// Scenario 6 "mixed", assembly MixedClassic: compiled WITHOUT runtime async, so every async method
// here is a classic compiler-generated state machine (IAsyncStateMachine, AsyncTaskMethodBuilder).
// See ../Program.cs for the chains.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class Classic
    {
        // Middle of chain "ra-classic-ra": classic code awaiting runtime-async code.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ClassicMiddle(Task<int> gate)
        {
            int classicMiddleLocal = 5001;  // 5001
            int r = await RaLib.RaLeaf(gate); // @await ClassicMiddle
            return r + classicMiddleLocal;
        }

        // Leaf of chain "classic-ra-classic".
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ClassicLeaf(Task<int> gate)
        {
            int classicLeafLocal = 5002;  // 5002
            int r = await gate; // @await ClassicLeaf
            return r + classicLeafLocal;
        }

        // Top of chain "classic-ra-classic": classic code awaiting runtime-async code that awaits classic code.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ClassicTop(Task<int> gate)
        {
            string classicTopLocal = "classic-top";  // "classic-top"
            int r = await RaLib.RaMiddle(() => ClassicLeaf(gate)); // @await ClassicTop
            return r + classicTopLocal.Length;
        }
    }
}
