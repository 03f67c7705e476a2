// Scenario "faulted": a runtime-async task that faulted, kept alive in a static, and one chain
// parked on it (Observer awaits a TaskCompletionSource and keeps the faulted task in a local).
//
//   FaultedApp.s_faulted  = Fail(42): after one await it throws
//       InvalidOperationException("faulted: order 42 failed") whose InnerException is
//       ArgumentException("inner: order must be positive") (thrown and caught in Check)
//   FaultedApp.s_observer = Observer(): awaits s_gate.Task forever
//
// READY once s_faulted IsFaulted. Lines marked "@throw" are where the exceptions are thrown.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class FaultedApp
    {
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static readonly TaskCompletionSource<int> s_step = new TaskCompletionSource<int>();
        public static Task<int>? s_faulted;
        public static Task<int>? s_observer;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Check(int order)
        {
            if (order > 0)
                throw new ArgumentException("inner: order must be positive"); // @throw Check
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Fail(int order)
        {
            int r = await s_step.Task; // @await Fail
            try
            {
                Check(order);
            }
            catch (ArgumentException e)
            {
                throw new InvalidOperationException($"faulted: order {order} failed", e); // @throw Fail
            }
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Observer(Task<int> faulted)
        {
            int r = await s_gate.Task; // @await Observer
            Sample.Use(faulted);
            return r;
        }

        public static int Main(string[] args)
        {
            s_faulted = Fail(Sample.Id(42));
            s_observer = Observer(s_faulted);
            s_step.SetResult(1);
            for (int i = 0; i < 500 && !s_faulted.IsFaulted; i++)
                System.Threading.Thread.Sleep(10);
            if (!s_faulted.IsFaulted)
            {
                Console.Error.WriteLine("faulted: the task did not fault");
                return 1;
            }
            Sample.Ready("faulted", "chains=1");
            Sample.ParkForever();
            GC.KeepAlive(s_observer);
            return 0;
        }
    }
}
