// Scenario "soak": a live workload that checks its own results while debuggers attach, read and
// detach (tests/integration/test_soak.py, scripts/soak).
//
//   soak [--workers W] [--seconds S]
//
// W workers (default 8, on the thread pool) each run units of work in a loop: a unit is a chain of
// runtime-async calls SoakTop -> SoakMiddle -> SoakLeaf (x2) in which every call suspends
// (Task.Yield; every 8th leaf also Task.Delay(1)) with locals live across its await, so Continuation
// chains are made, parked and resumed all the time. A unit's value depends on (worker, index) alone;
// the worker adds it to its checksum and counts the unit. A local that differs after its await, or
// an exception, is an error.
//
// stdin: a line "stop" (or S seconds, default 3600; end of input does not) ends the run: the workers finish
// their unit and stop, every checksum is recomputed synchronously from the number of units its worker
// finished, and the last line is
//   DONE units=<n> errors=<e> checksums=<ok|BAD> max_gap_ms=<g> stalled_workers=<k>
// (max_gap_ms: the longest gap between the 10 ms ticks of a heartbeat thread: how long the process
// was held stopped; stalled_workers: workers that did not stop within 10 s). Exit code 0 when there
// is no error, every checksum matches and no worker stalled. READY is printed once every worker has
// finished a unit, then "PROGRESS units=<n>" every 20 ms.
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class SoakApp
    {
        static volatile bool s_stop;
        static long s_errors;
        static long[] s_units = Array.Empty<long>();
        static long[] s_sums = Array.Empty<long>();
        static long s_maxGapTicks;

        static long Mix(int worker, long i) => unchecked((worker + 1) * (long)0x9E3779B97F4A7C15 ^ (i * (long)0xBF58476D1CE4E5B9));

        static void Check(bool ok)
        {
            if (!ok)
                Interlocked.Increment(ref s_errors);
        }

        static async Task<long> SoakLeaf(int worker, long i)
        {
            long leafLocal = Sample.Id(Mix(worker, i));
            await Task.Yield();
            if ((i & 7) == 0)
                await Task.Delay(1);
            Check(leafLocal == Mix(worker, i));
            return unchecked(leafLocal + 1);
        }

        static async Task<long> SoakMiddle(int worker, long i)
        {
            int midLocal = Sample.Id(worker * 1000 + (int)(i & 0xFF));
            long a = await SoakLeaf(worker, 2 * i);
            long b = await SoakLeaf(worker, 2 * i + 1);
            Check(midLocal == worker * 1000 + (int)(i & 0xFF));
            return unchecked(a * 31 + b);
        }

        static async Task<long> SoakTop(int worker, long i)
        {
            string topLocal = Sample.Id("unit-" + i);
            long m = await SoakMiddle(worker, i);
            Check(topLocal == "unit-" + i);
            return m ^ topLocal.Length;
        }

        // The same values, computed without awaiting.
        static long UnitValue(int worker, long i)
        {
            long a = unchecked(Mix(worker, 2 * i) + 1), b = unchecked(Mix(worker, 2 * i + 1) + 1);
            return unchecked(a * 31 + b) ^ ("unit-" + i).Length;
        }

        static async Task Worker(int worker)
        {
            for (long i = 0; !s_stop; i++)
            {
                try
                {
                    long v = await SoakTop(worker, i);
                    s_sums[worker] = unchecked(s_sums[worker] + v);
                    Volatile.Write(ref s_units[worker], i + 1);
                }
                catch (Exception e)
                {
                    Console.Error.WriteLine($"soak: worker {worker}: {e}");
                    Interlocked.Increment(ref s_errors);
                    return;
                }
            }
        }

        static void Heartbeat()
        {
            long last = Stopwatch.GetTimestamp();
            while (!s_stop)
            {
                Thread.Sleep(10);
                long now = Stopwatch.GetTimestamp();
                if (now - last > s_maxGapTicks)
                    s_maxGapTicks = now - last;
                last = now;
            }
        }

        static long Total()
        {
            long n = 0;
            for (int w = 0; w < s_units.Length; w++)
                n += Volatile.Read(ref s_units[w]);
            return n;
        }

        public static int Main(string[] args)
        {
            int workers = int.Parse(Sample.Option(args, "--workers", "8"));
            double seconds = double.Parse(Sample.Option(args, "--seconds", "3600"), System.Globalization.CultureInfo.InvariantCulture);
            s_units = new long[workers];
            s_sums = new long[workers];
            var stopRequested = new ManualResetEventSlim();
            var reader = new Thread(() =>
            {
                string? line;
                while ((line = Console.In.ReadLine()) != null)
                    if (line.Trim() == "stop")
                    {
                        stopRequested.Set();
                        return;
                    }
            }) { IsBackground = true, Name = "soak-stdin" };
            reader.Start();
            var heartbeat = new Thread(Heartbeat) { IsBackground = true, Name = "soak-heartbeat" };
            heartbeat.Start();
            var tasks = new Task[workers];
            for (int w = 0; w < workers; w++)
            {
                int worker = w;
                tasks[w] = Task.Run(() => Worker(worker));
            }
            var clock = Stopwatch.StartNew();
            while (Array.Exists(s_units, n => n == 0) && clock.Elapsed.TotalSeconds < 60)
                Thread.Sleep(1);
            Sample.Ready("soak", $"workers={workers}");
            while (!stopRequested.Wait(20) && clock.Elapsed.TotalSeconds < seconds)
            {
                Console.Out.Write($"PROGRESS units={Total()}\n");
                Console.Out.Flush();
            }
            s_stop = true;
            int stalled = 0;
            for (int w = 0; w < workers; w++)
                if (!tasks[w].Wait(TimeSpan.FromSeconds(10)))
                    stalled++;
            bool ok = true;
            for (int w = 0; w < workers; w++)
            {
                long expected = 0, n = Volatile.Read(ref s_units[w]);
                for (long i = 0; i < n; i++)
                    expected = unchecked(expected + UnitValue(w, i));
                ok &= expected == s_sums[w];
            }
            long gapMs = s_maxGapTicks * 1000 / Stopwatch.Frequency;
            long errors = Interlocked.Read(ref s_errors);
            Console.Out.Write($"DONE units={Total()} errors={errors} checksums={(ok ? "ok" : "BAD")} max_gap_ms={gapMs} stalled_workers={stalled}\n");
            Console.Out.Flush();
            return errors == 0 && ok && stalled == 0 ? 0 : 1;
        }
    }
}
