// Scenario 6 "mixed", assembly RaLib: compiled WITH runtime async (features:runtime-async=on).
// See ../Program.cs for the chains.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class RaLib
    {
        // Leaf of chain "ra-classic-ra": awaits the never-completed gate.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RaLeaf(Task<int> gate)
        {
            int raLeafLocal = Sample.Id(4001);  // 4001
            int r = await gate; // @await RaLeaf
            return r + raLeafLocal;
        }

        // Middle of chain "classic-ra-classic": awaits a classic state-machine method through a delegate.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RaMiddle(Func<Task<int>> inner)
        {
            long raMiddleLocal = Sample.Id(4002L);  // 4002
            int r = await inner(); // @await RaMiddle
            return r + (int)raMiddleLocal;
        }
    }
}
