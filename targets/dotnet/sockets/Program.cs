// Scenario "sockets": chains parked on socket I/O over loopback.
//
//   WaitReceive   awaits client.ReceiveAsync(buffer) on a connected TCP socket to 127.0.0.1 (no data sent)
//   WaitStream    awaits NetworkStream.ReadAsync on the accepted (server) side of the same connection
// READY prints the client's local port and the listener's port.
using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public static class SocketsApp
    {
        public static Socket? s_client, s_server;
        public static NetworkStream? s_stream;
        public static Task[] s_chains = Array.Empty<Task>();

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitReceive(Socket s)
        {
            byte[] buf = new byte[16];
            return await s.ReceiveAsync(buf.AsMemory(), SocketFlags.None); // @await WaitReceive
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> WaitStream(NetworkStream ns)
        {
            byte[] buf = new byte[16];
            return await ns.ReadAsync(buf.AsMemory()); // @await WaitStream
        }

        public static int Main(string[] args)
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            int port = ((IPEndPoint)listener.LocalEndpoint).Port;
            s_client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            s_client.Connect(IPAddress.Loopback, port);
            s_server = listener.AcceptSocket();
            s_stream = new NetworkStream(s_server, ownsSocket: false);
            s_chains = new Task[] { WaitReceive(s_client), WaitStream(s_stream) };
            Thread.Sleep(200);
            foreach (Task t in s_chains)
                if (t.IsCompleted)
                {
                    Console.Error.WriteLine("sockets: a chain completed unexpectedly");
                    return 1;
                }
            int local = ((IPEndPoint)s_client.LocalEndPoint!).Port;
            Sample.Ready("sockets", "port=" + port + " client_port=" + local);
            Sample.ParkForever();
            GC.KeepAlive(listener);
            return 0;
        }
    }
}
