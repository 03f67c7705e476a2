// pdbdump <file.pdb | assembly.dll (embedded PDB)>
//
// Prints, with System.Reflection.Metadata: the PDB id, every document, and for every method with
// debug information its sequence points (GetSequencePoints) and local scopes with their variables.
// The format is the one tests/unit/test_pdb.c prints from asyncdac's reader.
using System;
using System.IO;
using System.Linq;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

internal static class Program
{
    private static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: pdbdump <file.pdb | assembly.dll>");
            return 2;
        }
        MetadataReaderProvider provider;
        if (args[0].EndsWith(".pdb", StringComparison.OrdinalIgnoreCase))
        {
            provider = MetadataReaderProvider.FromPortablePdbStream(File.OpenRead(args[0]));
        }
        else
        {
            var pe = new PEReader(File.OpenRead(args[0]));
            DebugDirectoryEntry e = pe.ReadDebugDirectory().First(x => x.Type == DebugDirectoryEntryType.EmbeddedPortablePdb);
            provider = pe.ReadEmbeddedPortablePdbDebugDirectoryData(e);
        }
        MetadataReader r = provider.GetMetadataReader();
        Console.WriteLine("id " + Convert.ToHexString(r.DebugMetadataHeader!.Id.ToArray()).ToLowerInvariant());
        foreach (DocumentHandle dh in r.Documents)
            Console.WriteLine($"document {MetadataTokens.GetRowNumber(dh)} {r.GetString(r.GetDocument(dh).Name)}");
        foreach (MethodDebugInformationHandle mh in r.MethodDebugInformation)
        {
            int rid = MetadataTokens.GetRowNumber(mh);
            var points = r.GetMethodDebugInformation(mh).GetSequencePoints().ToList();
            var scopes = r.GetLocalScopes(MetadataTokens.MethodDefinitionHandle(rid)).ToList();
            if (points.Count == 0 && scopes.Count == 0)
                continue;
            Console.WriteLine($"method 0x{0x06000000 | rid:x8}");
            foreach (SequencePoint sp in points)
            {
                int doc = MetadataTokens.GetRowNumber(sp.Document);
                if (sp.IsHidden)
                    Console.WriteLine($"  il=0x{sp.Offset:x4} doc={doc} hidden");
                else
                    Console.WriteLine($"  il=0x{sp.Offset:x4} doc={doc} {sp.StartLine}:{sp.StartColumn}-{sp.EndLine}:{sp.EndColumn}");
            }
            foreach (LocalScopeHandle sh in scopes)
            {
                LocalScope s = r.GetLocalScope(sh);
                foreach (LocalVariableHandle vh in s.GetLocalVariables())
                {
                    LocalVariable v = r.GetLocalVariable(vh);
                    Console.WriteLine($"  scope [0x{s.StartOffset:x4},0x{s.EndOffset:x4}) local {v.Index} {r.GetString(v.Name)} attr={(int)v.Attributes}");
                }
            }
        }
        return 0;
    }
}
