// Scenario "syncwait": threads blocked synchronously on async chains (sync-over-async).
//
//   SyncTop(id) -> SyncLeaf(id) awaits s_gate (a TaskCompletionSource that never completes)
//   thread "wait-Wait"       blocks in SyncTop(1).Wait()
//   thread "wait-Result"     blocks in SyncTop(2).Result
//   thread "wait-GetResult"  blocks in SyncTop(3).GetAwaiter().GetResult()
//   SyncTop(4)               awaited by nothing (no thread waits for it); its Task.Id is read, so
//                            the task has an id (m_taskId), printed on the READY line
//   RunWaitTop(6) -> RunWaitLeaf(6), resumed on a thread-pool thread after an await (Task.Yield),
//                            blocks in SyncTop(5).Wait(): a running chain whose thread waits
//                            synchronously for another stack's task (sync-over-async in async code)
//   RunEventTop(7) -> RunEventLeaf(7), resumed on a thread-pool thread, blocks in s_event.Wait(): a
//                            running chain whose thread waits on a ManualResetEventSlim never set
// A blocking wait registers a Task+SetOnInvokeMres as the task's continuation (m_continuationObject)
// before it blocks: READY is printed once the three tasks have one.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class SyncWaitApp
    {
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static readonly Task<int>[] s_tasks = new Task<int>[5];
        public static Task<int> s_running = Task.FromResult(0), s_evented = Task.FromResult(0);
        public static readonly ManualResetEventSlim s_event = new ManualResetEventSlim(false);
        static volatile Thread? s_eventThread;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> SyncLeaf(int id)
        {
            return await s_gate.Task + id; // @await SyncLeaf
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> SyncTop(int id)
        {
            return await SyncLeaf(id) * 2; // @await SyncTop
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunWaitLeaf(int id)
        {
            await Task.Yield();
            return s_tasks[4].Result + id; // @wait RunWaitLeaf
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunWaitTop(int id)
        {
            return await RunWaitLeaf(id) * 2; // @await RunWaitTop
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunEventLeaf(int id)
        {
            await Task.Yield();
            s_eventThread = Thread.CurrentThread;
            s_event.Wait(); // @wait RunEventLeaf
            return id;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunEventTop(int id)
        {
            return await RunEventLeaf(id) * 2; // @await RunEventTop
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void BlockWait() => s_tasks[0].Wait();

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void BlockResult() => GC.KeepAlive(s_tasks[1].Result);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void BlockGetResult() => GC.KeepAlive(s_tasks[2].GetAwaiter().GetResult());

        public static int Main(string[] args)
        {
            for (int i = 0; i < s_tasks.Length; i++)
                s_tasks[i] = SyncTop(i + 1);
            ThreadStart[] blockers = { BlockWait, BlockResult, BlockGetResult };
            string[] names = { "wait-Wait", "wait-Result", "wait-GetResult" };
            for (int i = 0; i < blockers.Length; i++)
                new Thread(blockers[i]) { Name = names[i], IsBackground = true }.Start();
            s_running = RunWaitTop(6);
            s_evented = RunEventTop(7);
            FieldInfo cont = typeof(Task).GetField("m_continuationObject", BindingFlags.NonPublic | BindingFlags.Instance)!;
            SpinWait spin = default;
            foreach (int i in new[] { 0, 1, 2, 4 })
                while (cont.GetValue(s_tasks[i]) == null)
                    spin.SpinOnce();
            while (s_eventThread == null)
                Thread.Sleep(1);
            Sample.WaitBlocked(s_eventThread);
            Sample.Ready("syncwait", $"blocked=4 id4={s_tasks[3].Id}");
            Sample.ParkForever();
            GC.KeepAlive(s_tasks);
            return 0;
        }
    }
}
