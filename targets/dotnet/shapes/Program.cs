// Scenario 4 "shapes": one pending chain per language shape, each awaiting its own never-completed
// thing. Chains (callee -> caller order through Continuation.Next), by the top method's name:
//
//   ValueTask        ShapesApp.VtLeaf (async ValueTask<int>) -> ShapesApp.VtTop
//                    VtLeaf awaits a ValueTask<int> backed by a never-completing IValueTaskSource<int>
//   Custom           ShapesApp.CustomLeaf -> ShapesApp.CustomTop; CustomLeaf awaits NeverAwaitable
//                    (a custom awaitable whose awaiter is never completed)
//   ConfigureFalse   ShapesApp.ConfigureFalse awaits gate.ConfigureAwait(false) -> ShapesApp.ConfigureTop
//   AwaitInTry       ShapesApp.AwaitInTry (await inside try { } catch { } finally { }) -> ShapesApp.TryTop
//   AwaitInCatch     ShapesApp.AwaitInCatch (await inside a catch block) -> ShapesApp.TryTop
//   AwaitInFinally   ShapesApp.AwaitInFinally (await inside a finally block) -> ShapesApp.TryTop
//   Loop             ShapesApp.LoopAwaits -> ShapesApp.LoopTop; LoopAwaits awaits Task.Yield() in
//                    iterations 0..2 (real suspensions, resumed on the thread pool) and parks in
//                    iteration 3 (i == 3, sum == 0+1+2 == 3) on a ParkingAwaitable
//   GenericValue     ShapesApp.GenericWait<int> -> ShapesApp.GenericValueTop (exact instantiation)
//   GenericRef       ShapesApp.GenericWait<string> -> ShapesApp.GenericRefTop (shared __Canon code)
//   GenericRef2      ShapesApp.GenericWait<Box> -> ShapesApp.GenericRef2Top (same shared code)
//   GenericClass     GenericWorker<string>.Work -> ShapesApp.GenericClassTop (shared code, class generic)
//   Lambda           the async lambda in ShapesApp.LambdaTop (<LambdaTop>b__*) -> ShapesApp.LambdaTop
//   LocalFunction    the async local function Local in ShapesApp.LocalFunctionTop
//                    (<LocalFunctionTop>g__Local|*) -> ShapesApp.LocalFunctionTop
//
// 13 chains. Lines marked "@await <name>" are the suspension points recorded in expected.json.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace AsyncdacSamples
{
    public sealed class Box
    {
        public int Value;

        public Box(int value)
        {
            Value = value;
        }
    }

    // An IValueTaskSource<int> that never completes; it keeps the continuation it is given.
    public sealed class NeverValueTaskSource : IValueTaskSource<int>
    {
        public static readonly List<object?> Registered = new List<object?>();

        public int GetResult(short token) => throw new InvalidOperationException("never completes");

        public ValueTaskSourceStatus GetStatus(short token) => ValueTaskSourceStatus.Pending;

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        {
            lock (Registered)
                Registered.Add(state);
        }
    }

    // A custom awaitable whose awaiter never completes. When Signal is set, it is set by
    // UnsafeOnCompleted/OnCompleted, i.e. once the awaiting chain is fully suspended.
    public readonly struct NeverAwaitable
    {
        private readonly ManualResetEventSlim? _signal;

        public NeverAwaitable(ManualResetEventSlim? signal)
        {
            _signal = signal;
        }

        public NeverAwaiter GetAwaiter() => new NeverAwaiter(_signal);
    }

    public readonly struct NeverAwaiter : ICriticalNotifyCompletion
    {
        public static readonly List<Action> Registered = new List<Action>();
        private readonly ManualResetEventSlim? _signal;

        public NeverAwaiter(ManualResetEventSlim? signal)
        {
            _signal = signal;
        }

        public bool IsCompleted => false;

        public int GetResult() => throw new InvalidOperationException("never completes");

        public void OnCompleted(Action continuation) => UnsafeOnCompleted(continuation);

        public void UnsafeOnCompleted(Action continuation)
        {
            lock (Registered)
                Registered.Add(continuation);
            _signal?.Set();
        }
    }

    public sealed class GenericWorker<T>
    {
        public T Item;

        public GenericWorker(T item)
        {
            Item = item;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public async Task<int> Work(Task<int> gate)
        {
            T copy = Sample.Id(Item);  // "worker-item" (T = string)
            int r = await gate; // @await GenericWorker.Work
            Sample.Use(copy);
            Sample.Use(this);
            return r;
        }
    }

    public static class ShapesApp
    {
        public static readonly Dictionary<string, TaskCompletionSource<int>> s_gates = new Dictionary<string, TaskCompletionSource<int>>();
        public static readonly List<Task> s_chains = new List<Task>();
        public static readonly ManualResetEventSlim s_loopParked = new ManualResetEventSlim(false);

        private static Task<int> Gate(string name)
        {
            var tcs = new TaskCompletionSource<int>();
            s_gates[name] = tcs;
            return tcs.Task;
        }

        // ---- ValueTask
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async ValueTask<int> VtLeaf()
        {
            int vtLocal = Sample.Id(314);  // 314
            int r = await new ValueTask<int>(new NeverValueTaskSource(), 7); // @await VtLeaf
            return r + vtLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> VtTop()
        {
            int r = await VtLeaf(); // @await VtTop
            return r;
        }

        // ---- custom awaitable
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> CustomLeaf()
        {
            string customLocal = Sample.Id("custom");  // "custom"
            int r = await new NeverAwaitable(null); // @await CustomLeaf
            return r + customLocal.Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> CustomTop()
        {
            int r = await CustomLeaf(); // @await CustomTop
            return r;
        }

        // ---- ConfigureAwait(false)
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ConfigureFalse(Task<int> gate)
        {
            int cfgLocal = Sample.Id(271);  // 271
            int r = await gate.ConfigureAwait(false); // @await ConfigureFalse
            return r + cfgLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> ConfigureTop()
        {
            int r = await ConfigureFalse(Gate("ConfigureFalse")); // @await ConfigureTop
            return r;
        }

        // ---- try / catch / finally
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> AwaitInTry(Task<int> gate)
        {
            int tryLocal = Sample.Id(1001);  // 1001
            try
            {
                tryLocal += await gate; // @await AwaitInTry
            }
            catch (InvalidOperationException)
            {
                tryLocal = -1;
            }
            finally
            {
                Sample.Use(tryLocal);
            }
            return tryLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> AwaitInCatch(Task<int> gate)
        {
            int catchLocal = Sample.Id(1002);  // 1002
            try
            {
                throw new InvalidOperationException("in-catch");
            }
            catch (InvalidOperationException ex)
            {
                catchLocal += await gate; // @await AwaitInCatch
                Sample.Use(ex);
            }
            return catchLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> AwaitInFinally(Task<int> gate)
        {
            int finallyLocal = Sample.Id(1003);  // 1003
            try
            {
                Sample.Use(finallyLocal);
            }
            finally
            {
                finallyLocal += await gate; // @await AwaitInFinally
            }
            return finallyLocal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> TryTop(int which)
        {
            int r;
            if (which == 0)
                r = await AwaitInTry(Gate("AwaitInTry")); // @await TryTop.0
            else if (which == 1)
                r = await AwaitInCatch(Gate("AwaitInCatch")); // @await TryTop.1
            else
                r = await AwaitInFinally(Gate("AwaitInFinally")); // @await TryTop.2
            return r;
        }

        // ---- several awaits in one method (a loop), parked at iteration 3
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> LoopAwaits()
        {
            int sum = 0;
            for (int i = 0; i < 10; i++)
            {
                if (i < 3)
                    await Task.Yield(); // @await LoopAwaits.yield
                else if (i == 3)
                    sum += await new NeverAwaitable(s_loopParked); // @await LoopAwaits.park
                sum += i;
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> LoopTop()
        {
            int r = await LoopAwaits(); // @await LoopTop
            return r;
        }

        // ---- generic async methods over value and reference types
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GenericWait<T>(T value, Task<int> gate)
        {
            T held = Sample.Id(value);  // 5 (int) / "generic-string" (string) / Box{Value=6} (Box)
            int r = await gate; // @await GenericWait
            Sample.Use(held);
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GenericValueTop()
        {
            int r = await GenericWait<int>(5, Gate("GenericValue")); // @await GenericValueTop
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GenericRefTop()
        {
            int r = await GenericWait<string>("generic-string", Gate("GenericRef")); // @await GenericRefTop
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GenericRef2Top()
        {
            int r = await GenericWait<Box>(new Box(6), Gate("GenericRef2")); // @await GenericRef2Top
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> GenericClassTop()
        {
            var worker = new GenericWorker<string>("worker-item");
            int r = await worker.Work(Gate("GenericClass")); // @await GenericClassTop
            return r;
        }

        // ---- async lambda and async local function
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> LambdaTop()
        {
            Task<int> gate = Gate("Lambda");
            Func<Task<int>> lambda = async () =>
            {
                int lambdaLocal = Sample.Id(55);  // 55
                int x = await gate; // @await Lambda
                return x + lambdaLocal;
            };
            int r = await lambda(); // @await LambdaTop
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> LocalFunctionTop()
        {
            Task<int> gate = Gate("LocalFunction");
            int r = await Local(66); // @await LocalFunctionTop
            return r;

            async Task<int> Local(int arg)  // arg = 66
            {
                int localLocal = Sample.Id(arg + 1);  // 67
                int x = await gate; // @await LocalFunction
                return x + localLocal;
            }
        }

        private static void Start(Task t, string name)
        {
            if (t.IsCompleted)
                throw new InvalidOperationException($"shapes: chain {name} completed unexpectedly");
            s_chains.Add(t);
        }

        public static int Main(string[] args)
        {
            Start(VtTop(), "ValueTask");
            Start(CustomTop(), "Custom");
            Start(ConfigureTop(), "ConfigureFalse");
            Start(TryTop(0), "AwaitInTry");
            Start(TryTop(1), "AwaitInCatch");
            Start(TryTop(2), "AwaitInFinally");
            Start(LoopTop(), "Loop");
            Start(GenericValueTop(), "GenericValue");
            Start(GenericRefTop(), "GenericRef");
            Start(GenericRef2Top(), "GenericRef2");
            Start(GenericClassTop(), "GenericClass");
            Start(LambdaTop(), "Lambda");
            Start(LocalFunctionTop(), "LocalFunction");
            // The loop chain parks on the thread pool: wait for its awaiter to be registered, then give
            // the dispatcher a moment to finish returning.
            if (!s_loopParked.Wait(TimeSpan.FromSeconds(30)))
            {
                Console.Error.WriteLine("shapes: the loop chain did not park");
                return 1;
            }
            Thread.Sleep(200);
            Sample.Ready("shapes", $"chains={s_chains.Count}");
            Sample.ParkForever();
            GC.KeepAlive(s_chains);
            return 0;
        }
    }
}
