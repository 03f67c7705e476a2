// The method behind the synthetic array-layout target (tests/unit/test_locals.c; see README.md).
// Only its metadata and PDB are used: the test lays out a runtime around ArrayLayout.dll in memory
// (MethodTables, FieldDescs, a MethodDesc for Worker.Work) and an array-layout continuation whose
// Data (byte[]) and GCData (object[]) hold the values below, located by hand-made async debug info.
// The values the test puts there are the ones in the comments.
namespace ArrayLayoutSamples
{
    public enum Mode : short
    {
        Off = 0,
        Slow = 1,
        Fast = 2,
    }

    // No references: all of it from Data.
    public struct Plain
    {
        public int X;        // 3
        public double Y;     // 1.5
    }

    // One reference: Data for Id and Big, GCData for Tag.
    public struct Mixed
    {
        public int Id;       // 9
        public object Tag;   // "tag"
        public long Big;     // -2
    }

    // Several references, declared in another order than their offsets (the runtime's layout puts
    // A at 0, B at 8, C at 16): GCData holds them in ascending offset order A, B, C.
    public struct Many
    {
        public object C;     // the Node
        public int X;        // 4
        public string B;     // "b"
        public object A;     // "a"
        public byte Y;       // 255
    }

    // A struct with references inside a nested struct: GCData holds Inner.Tag, then Name.
    public struct Outer
    {
        public Mixed Inner;  // { Id = 10, Tag = "inner", Big = 11 }
        public string Name;  // "outer"
    }

    // A generic struct: its instantiation Pair<string> is found among the runtime's constructed
    // types (Module.AvailableTypeParams).
    public struct Pair<T>
    {
        public T First;      // "first"
        public int Count;    // 2
    }

    public sealed class Node
    {
        public int Value;    // 7
        public string Label; // "n7"

        public Node(int value, string label)
        {
            Value = value;
            Label = label;
        }
    }

    public sealed class Worker
    {
        public int Id;       // 1

        public int Work(int count, string label, Mode mode)     // 42, "work", Fast
        {
            int i = count;                                       // 42
            long big = 1L << 40;                                 // 1099511627776
            double ratio = 0.25;                                 // 0.25
            bool flag = true;                                    // true
            char letter = 'Z';                                   // 'Z'
            Mode m = mode;                                       // Fast
            string text = label;                                 // "work"
            object boxed = 5;                                    // boxed int 5
            Node node = new Node(7, "n7");                       // Node { Value = 7, Label = "n7" }
            Plain plain = new Plain { X = 3, Y = 1.5 };
            Mixed mixed = new Mixed { Id = 9, Tag = "tag", Big = -2 };
            Many many = new Many { C = node, X = 4, B = "b", A = "a", Y = 255 };
            Outer outer = new Outer { Inner = new Mixed { Id = 10, Tag = "inner", Big = 11 }, Name = "outer" };
            int[] numbers = { 1, 2, 3 };                         // int[3] { 1, 2, 3 }
            Pair<string> pair = new Pair<string> { First = "first", Count = 2 };
            return Use(i, big, ratio, flag, letter, m, text, boxed, node, plain, mixed, many, outer, numbers, pair) + Id;
        }

        private static int Use(params object[] values) => values.Length;
    }
}
