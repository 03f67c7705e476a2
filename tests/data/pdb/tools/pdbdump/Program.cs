// pdbdump <file.pdb | assembly.dll (embedded PDB)>
//
// Prints, with System.Reflection.Metadata: the PDB id, every document, and for every method with
// debug information its sequence points (GetSequencePoints), local scopes with their variables and
// async stepping information (the AsyncMethodSteppingInformation custom debug information of a
// classic async MoveNext). The format is the one tests/unit/test_pdb.c prints from asyncdac's reader.
using System;
using System.IO;
using System.Linq;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

internal static class Program
{
    private static readonly Guid AsyncMethodSteppingInformation = new Guid("54FD2AC5-E925-401A-9C2A-F94F171072F8");

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
            // A method is listed when it has sequence points or local variables (test_pdb.c sees the
            // scopes through their variables; a scope without variables prints nothing).
            if (points.Count == 0 && !scopes.Any(sh => r.GetLocalScope(sh).GetLocalVariables().Count > 0))
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
            foreach (CustomDebugInformationHandle ch in r.GetCustomDebugInformation(MetadataTokens.MethodDefinitionHandle(rid)))
            {
                CustomDebugInformation cdi = r.GetCustomDebugInformation(ch);
                if (r.GetGuid(cdi.Kind) != AsyncMethodSteppingInformation)
                    continue;
                // catch handler offset + 1 (0: none), then (yield offset, resume offset, resume method row id) per await
                BlobReader b = r.GetBlobReader(cdi.Value);
                uint handler = b.ReadUInt32();
                Console.WriteLine(handler == 0 ? "  async catch=none" : $"  async catch=0x{handler - 1:x4}");
                while (b.RemainingBytes > 0)
                {
                    uint yieldOffset = b.ReadUInt32();
                    uint resumeOffset = b.ReadUInt32();
                    int method = b.ReadCompressedInteger();
                    Console.WriteLine($"  await yield=0x{yieldOffset:x4} resume=0x{resumeOffset:x4} method=0x{0x06000000 | method:x8}");
                }
            }
        }
        return 0;
    }
}
