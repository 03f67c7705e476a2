// Scenario 1 "nested": one chain A -> B -> C, depth 3.
//
//   NestedApp.A (static)  awaits  Holder<int>.B (instance, T = int, exact instantiation)
//   Holder<int>.B         awaits  NestedApp.C<string> (static generic, T = string: shared __Canon code)
//   NestedApp.C<string>   awaits  s_gate.Task (a TaskCompletionSource<int> that never completes)
//
// Callee -> caller order through Continuation.Next: C -> B -> A.
// Every frame holds live-across-await locals of many kinds, all initialised through Sample.Id(...)
// so that the JIT cannot fold them, and all consumed after the await (so they are really live
// across it). The values are in the comment beside each local and in expected.json.
// Lines marked "@await <method>" are the suspension points recorded in expected.json.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncdacSamples
{
    public enum Color
    {
        Red = 1,
        Green = 2,
        Blue = 3,
    }

    public sealed class Payload
    {
        public int Value;
        public string Name;

        public Payload(int value, string name)
        {
            Value = value;
            Name = name;
        }
    }

    // A struct mixing int and object fields.
    public struct Pair
    {
        public int Id;
        public object Tag;
        public int Count;

        public Pair(int id, object tag, int count)
        {
            Id = id;
            Tag = tag;
            Count = count;
        }
    }

    public sealed class Holder<T>
    {
        public T Field;          // Holder<int>: 500
        public string Label;     // "holder-label"

        public Holder(T field, string label)
        {
            Field = field;
            Label = label;
        }

        // Instance method: `this` is live across the await (used after it).
        [MethodImpl(MethodImplOptions.NoInlining)]
        public async Task<int> B(T bGeneric, Task<int> gate)      // bGeneric = 77 (T = int)
        {
            int bInt = Sample.Id(-200);                             // -200
            long bLong = Sample.Id(-9876543210L);                   // -9876543210
            double bDouble = Sample.Id(-0.5);                       // -0.5
            bool bBool = Sample.Id(false);                          // false
            char bChar = Sample.Id('b');                            // 'b' (98)
            Color bColor = Sample.Id(Color.Blue);                   // Blue (3)
            string bString = Sample.Id("beta");                     // "beta"
            object bObj = Sample.Id<object>(2.5);                   // boxed double 2.5
            Payload bPayload = Sample.Id(new Payload(2, "p-b"));    // Payload{Value=2, Name="p-b"}
            Pair bPair = Sample.Id(new Pair(22, "tag-b", 23));      // Pair{Id=22, Tag="tag-b", Count=23}
            T bLocalT = Sample.Id(bGeneric);                        // 77 (T = int)
            long[] bArray = Sample.Id(new long[] { 10, 20 });       // long[2] {10, 20}

            int r = await NestedApp.C<string>("gen-c", gate); // @await B

            Sample.Use(this.Field);
            Sample.Use(this.Label);
            Sample.Use(bInt); Sample.Use(bLong); Sample.Use(bDouble); Sample.Use(bBool);
            Sample.Use(bChar); Sample.Use(bColor); Sample.Use(bString); Sample.Use(bObj);
            Sample.Use(bPayload); Sample.Use(bPair); Sample.Use(bLocalT); Sample.Use(bArray);
            return r + bInt;
        }
    }

    public static class NestedApp
    {
        // Never completed: the chain stays suspended forever.
        public static readonly TaskCompletionSource<int> s_gate = new TaskCompletionSource<int>();
        public static Task<int>? s_chain;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> A(int seed)                   // seed = 1
        {
            int aInt = Sample.Id(42);                               // 42
            long aLong = Sample.Id(1234567890123L);                 // 1234567890123
            double aDouble = Sample.Id(3.25);                       // 3.25
            bool aBool = Sample.Id(true);                           // true
            char aChar = Sample.Id('A');                            // 'A' (65)
            Color aColor = Sample.Id(Color.Green);                  // Green (2)
            string aString = Sample.Id("alpha");                    // "alpha"
            object aObj = Sample.Id<object>(99);                    // boxed int 99
            Payload aPayload = Sample.Id(new Payload(1, "p-a"));    // Payload{Value=1, Name="p-a"}
            Pair aPair = Sample.Id(new Pair(11, "tag-a", 12));      // Pair{Id=11, Tag="tag-a", Count=12}
            int[] aArray = Sample.Id(new int[] { 1, 2, 3 });        // int[3] {1, 2, 3}
            var holder = Sample.Id(new Holder<int>(500, "holder-label")); // Holder<int>{Field=500, Label="holder-label"}

            int r = await holder.B(77, s_gate.Task); // @await A

            Sample.Use(seed);
            Sample.Use(aInt); Sample.Use(aLong); Sample.Use(aDouble); Sample.Use(aBool);
            Sample.Use(aChar); Sample.Use(aColor); Sample.Use(aString); Sample.Use(aObj);
            Sample.Use(aPayload); Sample.Use(aPair); Sample.Use(aArray); Sample.Use(holder);
            return r + aInt;
        }

        // Static generic method; instantiated with T = string, so it runs shared (__Canon) code
        // and keeps its generic context alive across the await.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> C<T>(T cGeneric, Task<int> gate)  // cGeneric = "gen-c" (T = string)
        {
            int cInt = Sample.Id(7);                                // 7
            long cLong = Sample.Id(long.MaxValue);                  // 9223372036854775807
            double cDouble = Sample.Id(1e100);                      // 1e100
            bool cBool = Sample.Id(true);                           // true
            char cChar = Sample.Id('\u00e9');                       // 'é' (233)
            Color cColor = Sample.Id(Color.Red);                    // Red (1)
            string cString = Sample.Id("gamma");                    // "gamma"
            object cObj = Sample.Id<object>("obj-c");               // string "obj-c"
            Payload cPayload = Sample.Id(new Payload(3, "p-c"));    // Payload{Value=3, Name="p-c"}
            Pair cPair = Sample.Id(new Pair(33, 34L, 35));          // Pair{Id=33, Tag=(boxed long)34, Count=35}
            T cLocalT = Sample.Id(cGeneric);                        // "gen-c" (T = string)
            string[] cArray = Sample.Id(new string[] { "x", "y" }); // string[2] {"x", "y"}

            int r = await gate; // @await C

            Sample.Use(cInt); Sample.Use(cLong); Sample.Use(cDouble); Sample.Use(cBool);
            Sample.Use(cChar); Sample.Use(cColor); Sample.Use(cString); Sample.Use(cObj);
            Sample.Use(cPayload); Sample.Use(cPair); Sample.Use(cLocalT); Sample.Use(cArray);
            return r + cInt;
        }

        public static int Main(string[] args)
        {
            s_chain = A(Sample.Id(1));
            if (s_chain.IsCompleted)
            {
                Console.Error.WriteLine("nested: chain completed unexpectedly");
                return 1;
            }
            Sample.Ready("nested", "chains=1");
            Sample.ParkForever();
            GC.KeepAlive(s_chain);
            return 0;
        }
    }
}
