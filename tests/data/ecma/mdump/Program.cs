// mdump: independent ground truth for asyncdac's ECMA-335 reader, signature decoder and names.
//
//   mdump metadata <dll> [--style sos|csharp|dac]
//       Dumps the metadata of <dll> with System.Reflection.Metadata as text, one fact per line, with
//       the types in signatures named in one of asyncdac's styles (dac/types/typename.h):
//         sos (default)  Int32, System.String, Ns.Outer+Inner, List<Int32>, Int32[], Int32&, Byte& pinned,
//                        generic variables by name
//         csharp         int, string, Ns.Outer+Inner, List<int>, int[], int&, byte&, generic variables by name
//         dac            as the DAC's SigFormat: Int32, System.String, Ns.Inner (no nesting), List`1<Int32,Int32>,
//                        Int32 ByRef, !0 / !!0, nothing for a TypeSpec in a class position
//       Row names (typeref, typedef, the owner of fields and methods) are "Ns.Outer+Inner" in every
//       style. tests/unit/test_signature.c prints the same lines from asyncdac's own reader and
//       compares them exactly.
//   mdump methods <core> --dac <libmscordaccore.so> [--module <substring>]...
//       Opens the core with ClrMD and Microsoft's DAC and prints "0x<MethodDesc> <name>" for every
//       method of every loaded type of the named modules (all modules if none) and of every type of
//       an object on the GC heap (and of each --md <MethodDesc>), the name being what the DAC's
//       GetMethodDescName gives (ClrMethod.Signature).
using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.Runtime;

namespace Asyncdac.Mdump
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            if (args.Length == 2 && args[0] == "metadata")
                return MetadataDump.Run(args[1], Style.Sos);
            if (args.Length == 4 && args[0] == "metadata" && args[2] == "--style" && Enum.TryParse<Style>(args[3], true, out var style))
                return MetadataDump.Run(args[1], style);
            if (args.Length >= 2 && args[0] == "methods")
                return Methods.Run(args[1..]);
            Console.Error.WriteLine("usage: mdump metadata <dll> [--style sos|csharp|dac] | mdump methods <core> --dac <so> [--module <substring>]...");
            return 2;
        }
    }

    internal enum Style { Sos, CSharp, Dac }

    internal sealed class Ctx
    {
        public TypeDefinitionHandle Type;
        public MethodDefinitionHandle Method;
    }

    internal sealed class Names : ISignatureTypeProvider<string, Ctx?>
    {
        private readonly MetadataReader _md;
        private readonly Style _style;
        private static readonly Regex Arity = new Regex(@"`[0-9]+(?=\+|$)", RegexOptions.CultureInvariant);

        public Names(MetadataReader md, Style style = Style.Sos) { _md = md; _style = style; }

        // A type token in a signature: SigFormat prints the row's own "Ns.Name".
        private string SigTypeName(EntityHandle h)
        {
            if (_style != Style.Dac)
                return NameOf(h, null);
            if (h.Kind == HandleKind.TypeDefinition)
            {
                var td = _md.GetTypeDefinition((TypeDefinitionHandle)h);
                string ns = _md.GetString(td.Namespace), name = _md.GetString(td.Name);
                return ns.Length == 0 ? name : ns + "." + name;
            }
            var tr = _md.GetTypeReference((TypeReferenceHandle)h);
            string rns = _md.GetString(tr.Namespace), rname = _md.GetString(tr.Name);
            return rns.Length == 0 ? rname : rns + "." + rname;
        }

        private static readonly Dictionary<PrimitiveTypeCode, string> Keywords = new()
        {
            [PrimitiveTypeCode.Boolean] = "bool", [PrimitiveTypeCode.Char] = "char", [PrimitiveTypeCode.SByte] = "sbyte",
            [PrimitiveTypeCode.Byte] = "byte", [PrimitiveTypeCode.Int16] = "short", [PrimitiveTypeCode.UInt16] = "ushort",
            [PrimitiveTypeCode.Int32] = "int", [PrimitiveTypeCode.UInt32] = "uint", [PrimitiveTypeCode.Int64] = "long",
            [PrimitiveTypeCode.UInt64] = "ulong", [PrimitiveTypeCode.Single] = "float", [PrimitiveTypeCode.Double] = "double",
            [PrimitiveTypeCode.IntPtr] = "nint", [PrimitiveTypeCode.UIntPtr] = "nuint", [PrimitiveTypeCode.String] = "string",
            [PrimitiveTypeCode.Object] = "object", [PrimitiveTypeCode.Void] = "void",
            [PrimitiveTypeCode.TypedReference] = "System.TypedReference",
        };

        public string TypeDefName(TypeDefinitionHandle h)
        {
            var td = _md.GetTypeDefinition(h);
            string name = _md.GetString(td.Name);
            var declaring = td.GetDeclaringType();
            if (!declaring.IsNil)
                return TypeDefName(declaring) + "+" + name;
            string ns = _md.GetString(td.Namespace);
            return ns.Length == 0 ? name : ns + "." + name;
        }

        public string TypeRefName(TypeReferenceHandle h)
        {
            var tr = _md.GetTypeReference(h);
            string name = _md.GetString(tr.Name);
            if (tr.ResolutionScope.Kind == HandleKind.TypeReference)
                return TypeRefName((TypeReferenceHandle)tr.ResolutionScope) + "+" + name;
            string ns = _md.GetString(tr.Namespace);
            return ns.Length == 0 ? name : ns + "." + name;
        }

        public string NameOf(EntityHandle h, Ctx? ctx) => h.Kind switch
        {
            HandleKind.TypeDefinition => TypeDefName((TypeDefinitionHandle)h),
            HandleKind.TypeReference => TypeRefName((TypeReferenceHandle)h),
            HandleKind.TypeSpecification => _md.GetTypeSpecification((TypeSpecificationHandle)h).DecodeSignature(this, ctx),
            _ => "?",
        };

        private string? GenericParamName(GenericParameterHandleCollection ps, int index)
        {
            foreach (var h in ps)
            {
                var gp = _md.GetGenericParameter(h);
                if (gp.Index == index)
                    return _md.GetString(gp.Name);
            }
            return null;
        }

        public string GetPrimitiveType(PrimitiveTypeCode code) => _style == Style.CSharp ? Keywords[code] : code switch
        {
            PrimitiveTypeCode.String => "System.String",
            PrimitiveTypeCode.Object => "System.Object",
            _ => code.ToString(),
        };
        public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => SigTypeName(handle);
        public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind) => SigTypeName(handle);
        public string GetTypeFromSpecification(MetadataReader reader, Ctx? ctx, TypeSpecificationHandle handle, byte rawTypeKind) =>
            _style == Style.Dac ? "" : reader.GetTypeSpecification(handle).DecodeSignature(this, ctx);
        public string GetGenericInstantiation(string genericType, ImmutableArray<string> typeArguments) => _style == Style.Dac
            ? genericType + "<" + string.Join(",", typeArguments) + ">"
            : Arity.Replace(genericType, "") + "<" + string.Join(", ", typeArguments) + ">";
        public string GetArrayType(string elementType, ArrayShape shape) =>
            elementType + "[" + (shape.Rank == 1 && _style != Style.Dac ? "*" : new string(',', shape.Rank - 1)) + "]";
        public string GetSZArrayType(string elementType) => elementType + "[]";
        public string GetByReferenceType(string elementType) => elementType + (_style == Style.Dac ? " ByRef" : "&");
        public string GetPointerType(string elementType) => elementType + "*";
        public string GetPinnedType(string elementType) => _style == Style.Sos ? elementType + " pinned" : elementType;
        public string GetModifiedType(string modifier, string unmodifiedType, bool isRequired) => unmodifiedType;
        public string GetFunctionPointerType(MethodSignature<string> signature) => signature.ReturnType + " " + Params(signature);
        public string GetGenericTypeParameter(Ctx? ctx, int index) =>
            (_style != Style.Dac && ctx != null && !ctx.Type.IsNil ? GenericParamName(_md.GetTypeDefinition(ctx.Type).GetGenericParameters(), index) : null) ?? "!" + index;
        public string GetGenericMethodParameter(Ctx? ctx, int index) =>
            (_style != Style.Dac && ctx != null && !ctx.Method.IsNil ? GenericParamName(_md.GetMethodDefinition(ctx.Method).GetGenericParameters(), index) : null) ?? "!!" + index;

        // "(A, B)"; a vararg call site gets "..., " at its sentinel, a vararg definition ", ..." at the end.
        public static string Params(MethodSignature<string> sig)
        {
            var sb = new StringBuilder("(");
            for (int i = 0; i < sig.ParameterTypes.Length; i++)
            {
                if (i > 0)
                    sb.Append(", ");
                if (i == sig.RequiredParameterCount)
                    sb.Append("..., ");
                sb.Append(sig.ParameterTypes[i]);
            }
            if (sig.Header.CallingConvention == SignatureCallingConvention.VarArgs && sig.RequiredParameterCount == sig.ParameterTypes.Length)
                sb.Append(sig.ParameterTypes.Length > 0 ? ", ..." : "...");
            return sb.Append(')').ToString();
        }

        public static string Method(MethodSignature<string> sig) =>
            sig.ReturnType + " " + Params(sig) + (sig.GenericParameterCount > 0 ? " generic=" + sig.GenericParameterCount : "");
    }

    internal static class MetadataDump
    {
        private static string Tok(EntityHandle h) => $"0x{MetadataTokens.GetToken(h):x8}";
        private static string Tok(Handle h) => $"0x{MetadataTokens.GetToken(h):x8}";
        private static string Hex(byte[] b) => b.Length == 0 ? "-" : Convert.ToHexString(b).ToLowerInvariant();

        public static int Run(string dll, Style style)
        {
            using var pe = new PEReader(File.OpenRead(dll));
            var md = pe.GetMetadataReader();
            var n = new Names(md, style);
            var o = new StringBuilder();
            o.Append($"version {md.MetadataVersion}\n");
            o.Append($"heap strings {md.GetHeapSize(HeapIndex.String)}\n");
            o.Append($"heap blob {md.GetHeapSize(HeapIndex.Blob)}\n");
            o.Append($"heap guid {md.GetHeapSize(HeapIndex.Guid)}\n");
            o.Append($"heap us {md.GetHeapSize(HeapIndex.UserString)}\n");
            for (int t = 0; t <= 0x2c; t++)
            {
                var ti = (TableIndex)t;
                int rows = md.GetTableRowCount(ti);
                if (rows > 0)
                    o.Append($"rows 0x{t:x2} {rows} {md.GetTableRowSize(ti)}\n");
            }
            if (md.IsAssembly)
            {
                var a = md.GetAssemblyDefinition();
                o.Append($"assembly {md.GetString(a.Name)} {a.Version}\n");
            }
            o.Append($"module {md.GetString(md.GetModuleDefinition().Name)}\n");
            foreach (var h in md.AssemblyReferences)
            {
                var r = md.GetAssemblyReference(h);
                o.Append($"assemblyref {Tok(h)} {md.GetString(r.Name)} {r.Version}\n");
            }
            foreach (var h in md.TypeReferences)
                o.Append($"typeref {Tok(h)} {n.TypeRefName(h)}\n");
            foreach (var h in md.TypeDefinitions)
            {
                var td = md.GetTypeDefinition(h);
                var ctx = new Ctx { Type = h };
                string extends = td.BaseType.IsNil ? "-" : n.NameOf(td.BaseType, ctx);
                o.Append($"typedef {Tok(h)} {n.TypeDefName(h)} flags=0x{(uint)td.Attributes:x8} extends={extends}");
                var gps = td.GetGenericParameters();
                if (gps.Count > 0)
                    o.Append(" generic <" + string.Join(", ", gps.Select(g => md.GetString(md.GetGenericParameter(g).Name))) + ">");
                o.Append('\n');
                if (!td.GetDeclaringType().IsNil)
                    o.Append($"nested {Tok(h)} in {Tok(td.GetDeclaringType())}\n");
                string owner = n.TypeDefName(h);
                foreach (var fh in td.GetFields())
                {
                    var f = md.GetFieldDefinition(fh);
                    o.Append($"field {Tok(fh)} {owner}::{md.GetString(f.Name)} flags=0x{(ushort)f.Attributes:x4} : {f.DecodeSignature(n, ctx)}");
                    var ch = f.GetDefaultValue();
                    if (!ch.IsNil)
                    {
                        var c = md.GetConstant(ch);
                        o.Append($" = 0x{(byte)c.TypeCode:x2} {Hex(md.GetBlobBytes(c.Value))}");
                    }
                    o.Append('\n');
                }
                foreach (var mh in td.GetMethods())
                {
                    var m = md.GetMethodDefinition(mh);
                    var mctx = new Ctx { Type = h, Method = mh };
                    o.Append($"method {Tok(mh)} {owner}::{md.GetString(m.Name)} flags=0x{(ushort)m.Attributes:x4} impl=0x{(ushort)m.ImplAttributes:x4} rva=0x{m.RelativeVirtualAddress:x} : {Names.Method(m.DecodeSignature(n, mctx))}");
                    var mgps = m.GetGenericParameters();
                    if (mgps.Count > 0)
                        o.Append(" <" + string.Join(", ", mgps.Select(g => md.GetString(md.GetGenericParameter(g).Name))) + ">");
                    o.Append('\n');
                    foreach (var ph in m.GetParameters())
                    {
                        var p = md.GetParameter(ph);
                        o.Append($"  param {p.SequenceNumber} {md.GetString(p.Name)} flags=0x{(ushort)p.Attributes:x4}\n");
                    }
                    if (m.RelativeVirtualAddress != 0)
                    {
                        var body = pe.GetMethodBody(m.RelativeVirtualAddress);
                        o.Append($"  body maxstack={body.MaxStack} code={body.GetILBytes()?.Length ?? 0}");
                        if (!body.LocalSignature.IsNil)
                        {
                            var locals = md.GetStandaloneSignature(body.LocalSignature).DecodeLocalSignature(n, mctx);
                            o.Append($" locals {Tok(body.LocalSignature)} : {string.Join(", ", locals)}");
                        }
                        o.Append('\n');
                    }
                }
            }
            foreach (var h in md.MemberReferences)
            {
                var r = md.GetMemberReference(h);
                string sig = r.GetKind() == MemberReferenceKind.Field ? r.DecodeFieldSignature(n, null) : Names.Method(r.DecodeMethodSignature(n, null));
                o.Append($"memberref {Tok(h)} {Tok(r.Parent)} {md.GetString(r.Name)} : {sig}\n");
            }
            for (int i = 1; i <= md.GetTableRowCount(TableIndex.TypeSpec); i++)
            {
                var h = MetadataTokens.TypeSpecificationHandle(i);
                o.Append($"typespec {Tok(h)} {md.GetTypeSpecification(h).DecodeSignature(n, null)}\n");
            }
            for (int i = 1; i <= md.GetTableRowCount(TableIndex.MethodSpec); i++)
            {
                var h = MetadataTokens.MethodSpecificationHandle(i);
                var s = md.GetMethodSpecification(h);
                o.Append($"methodspec {Tok(h)} {Tok(s.Method)} <{string.Join(", ", s.DecodeSignature(n, null))}>\n");
            }
            for (int i = 1; i <= md.GetTableRowCount(TableIndex.GenericParam); i++)
            {
                var h = MetadataTokens.GenericParameterHandle(i);
                var g = md.GetGenericParameter(h);
                o.Append($"genericparam {Tok(h)} owner={Tok(g.Parent)} #{g.Index} {md.GetString(g.Name)} flags=0x{(ushort)g.Attributes:x4}\n");
            }
            for (int i = 1; i <= md.GetTableRowCount(TableIndex.Constant); i++)
            {
                var h = MetadataTokens.ConstantHandle(i);
                var c = md.GetConstant(h);
                o.Append($"constant {Tok(h)} parent={Tok(c.Parent)} type=0x{(byte)c.TypeCode:x2} value={Hex(md.GetBlobBytes(c.Value))}\n");
            }
            for (int i = 1; i <= md.GetTableRowCount(TableIndex.StandAloneSig); i++)
            {
                var h = MetadataTokens.StandaloneSignatureHandle(i);
                var s = md.GetStandaloneSignature(h);
                string text = s.GetKind() == StandaloneSignatureKind.LocalVariables
                    ? string.Join(", ", s.DecodeLocalSignature(n, null))
                    : Names.Method(s.DecodeMethodSignature(n, null));
                o.Append($"standalonesig {Tok(h)} : {text}\n");
            }
            using var stdout = Console.OpenStandardOutput();
            var bytes = new UTF8Encoding(false).GetBytes(o.ToString());
            stdout.Write(bytes, 0, bytes.Length);
            return 0;
        }
    }

    internal static class Methods
    {
        public static int Run(string[] args)
        {
            string core = args[0];
            string? dac = null;
            var modules = new List<string>();
            var extra = new List<ulong>();
            for (int i = 1; i < args.Length; i++)
            {
                if (args[i] == "--dac" && i + 1 < args.Length)
                    dac = args[++i];
                else if (args[i] == "--module" && i + 1 < args.Length)
                    modules.Add(args[++i]);
                else if (args[i] == "--md" && i + 1 < args.Length)
                    extra.Add(Convert.ToUInt64(args[++i].Replace("0x", ""), 16));
            }
            if (dac == null)
            {
                Console.Error.WriteLine("mdump methods: --dac is required");
                return 2;
            }
            using var dt = DataTarget.LoadDump(core);
            using var rt = dt.ClrVersions[0].CreateRuntime(dac, ignoreMismatch: true);
            var mts = new SortedSet<ulong>();
            foreach (var m in rt.EnumerateModules())
            {
                string name = m.Name ?? "";
                if (modules.Count > 0 && !modules.Any(s => name.Contains(s, StringComparison.Ordinal)))
                    continue;
                foreach (var (mt, _) in m.EnumerateTypeDefToMethodTableMap())
                    if (mt != 0)
                        mts.Add(mt);
            }
            foreach (var obj in rt.Heap.EnumerateObjects())
                if (obj.Type != null && obj.Type.MethodTable != 0)
                    mts.Add(obj.Type.MethodTable);
            var seen = new SortedDictionary<ulong, string>();
            foreach (ulong mt in mts)
            {
                var type = rt.GetTypeByMethodTable(mt);
                if (type == null)
                    continue;
                foreach (var method in type.Methods)
                    if (method.MethodDesc != 0 && method.Signature != null)
                        seen[method.MethodDesc] = method.Signature;
            }
            foreach (ulong md in extra)
            {
                var method = rt.GetMethodByHandle(md);
                if (method?.Signature != null)
                    seen[md] = method.Signature;
            }
            var sb = new StringBuilder();
            foreach (var (md, sig) in seen)
                sb.Append($"0x{md:x} {sig}\n");
            using var stdout = Console.OpenStandardOutput();
            var bytes = new UTF8Encoding(false).GetBytes(sb.ToString());
            stdout.Write(bytes, 0, bytes.Length);
            Console.Error.WriteLine($"mdump: {seen.Count} methods of {mts.Count} types");
            return 0;
        }
    }
}
