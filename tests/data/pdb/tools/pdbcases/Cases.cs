// Methods whose portable PDB data covers the reader's cases. Line numbers matter: see the
// expected dumps in tests/data/pdb/{embedded,portable}/expected.
using System;
using System.Collections.Generic;

namespace PdbCases
{
    public static class Cases
    {
        // Nested scopes: `outer` in the method scope, `inner` and `deep` in block scopes.
        public static int Scopes(int n)
        {
            int outer = n * 2;
            for (int i = 0; i < n; i++)
            {
                int inner = i + outer;
                if (inner > 3)
                {
                    int deep = inner * inner;
                    outer += deep;
                }
            }
            return outer;
        }

        // foreach over a List<T> gives hidden sequence points (the enumerator plumbing).
        public static int Hidden(List<int> xs)
        {
            int sum = 0;
            foreach (int x in xs)
                sum += x;
            return sum;
        }

        // A document change in the middle of a method.
        public static string Documents(string s)
        {
            string a = s + "a";
#line 1000 "Generated.cs"
            string b = a + "b";
#line default
            return b + "c";
        }

        // A long line and a wide column range.
        public static int Wide() { int aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa = 1; return aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa + 1; }
    }
}
