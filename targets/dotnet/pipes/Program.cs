// Scenario "pipes": chains parked on pipe reads.
//
//   WaitPipeline   awaits PipeReader.ReadAsync on a System.IO.Pipelines Pipe holding 5 bytes it has
//                  examined but not consumed (a parser waiting for more; nobody writes again)
//   WaitAnonymous  awaits AnonymousPipeServerStream.ReadAsync (PipeDirection.In; the client end is open, silent)
// READY prints the Pipe's unread bytes and the anonymous pipe's read descriptor. On Linux PipeStream reads
// through a Socket made over the pipe's descriptor (Socket+AwaitableSocketAsyncEventArgs, AddressFamily Unknown).
using System;
using System.Buffers;
using System.IO;
using System.IO.Pipelines;
using System.IO.Pipes;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class PipesApp
    {
        public static Pipe? s_pipe;
        public static AnonymousPipeServerStream? s_anon;
        public static AnonymousPipeClientStream? s_anonClient;
        public static Task[] s_chains = Array.Empty<Task>();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<long> WaitPipeline(PipeReader reader)
        {
            ReadResult r = await reader.ReadAsync();
            reader.AdvanceTo(r.Buffer.Start, r.Buffer.End);
            ReadResult more = await reader.ReadAsync(); // @await WaitPipeline
            return more.Buffer.Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitAnonymous(Stream s)
        {
            byte[] buf = new byte[16];
            return await s.ReadAsync(buf.AsMemory()); // @await WaitAnonymous
        }

        public static int Main(string[] args)
        {
            s_pipe = new Pipe();
            s_pipe.Writer.Write("hello"u8);
            s_pipe.Writer.FlushAsync().AsTask().Wait();
            s_anon = new AnonymousPipeServerStream(PipeDirection.In);
            s_anonClient = new AnonymousPipeClientStream(PipeDirection.Out, s_anon.ClientSafePipeHandle);
            s_chains = new Task[] { WaitPipeline(s_pipe.Reader), WaitAnonymous(s_anon) };
            Thread.Sleep(200);
            foreach (Task t in s_chains)
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine("pipes: a chain completed unexpectedly");
                    return 1;
                }
            Sample.Ready("pipes", "unread=5 anon_fd=" + s_anon.SafePipeHandle.DangerousGetHandle());
            Sample.ParkForever();
            return 0;
        }
    }
}
