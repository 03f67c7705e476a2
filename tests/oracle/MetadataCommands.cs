// Metadata helpers built on System.Reflection.Metadata (no runtime involved): used by dotnet-setup to
// verify that runtime async is really on, and to read CoreLib's actual type layouts.
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

namespace Asyncdac.Oracle
{
    internal static class MetadataCommands
    {
        public const MethodImplAttributes AsyncImpl = (MethodImplAttributes)0x2000;

        public static string TypeFullName(MetadataReader md, TypeDefinitionHandle h)
        {
            var td = md.GetTypeDefinition(h);
            string name = md.GetString(td.Name);
            var declaring = td.GetDeclaringType();
            if (!declaring.IsNil)
                return TypeFullName(md, declaring) + "+" + name;
            string ns = md.GetString(td.Namespace);
            return ns.Length == 0 ? name : ns + "." + name;
        }

        private static Dictionary<string, TypeDefinitionHandle> TypeMap(MetadataReader md)
        {
            var map = new Dictionary<string, TypeDefinitionHandle>(StringComparer.Ordinal);
            foreach (var h in md.TypeDefinitions)
                map[TypeFullName(md, h)] = h;
            return map;
        }

        // check-async <dll> [!]Type::Method ... [<dll> [!]Type::Method ...]
        public static int CheckAsync(string[] args)
        {
            int failures = 0, checks = 0;
            PEReader? pe = null;
            MetadataReader? md = null;
            Dictionary<string, TypeDefinitionHandle>? types = null;
            string dll = "";
            foreach (string a in args)
            {
                if (a.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) && !a.Contains("::", StringComparison.Ordinal))
                {
                    pe?.Dispose();
                    dll = Args.RequireFile(a, "assembly");
                    pe = new PEReader(File.OpenRead(dll));
                    md = pe.GetMetadataReader();
                    types = TypeMap(md);
                    continue;
                }
                if (md == null || types == null)
                    throw new OracleException("check-async: name an assembly before the methods");
                bool wantAsync = !a.StartsWith('!');
                string spec = wantAsync ? a : a[1..];
                int sep = spec.IndexOf("::", StringComparison.Ordinal);
                if (sep < 0)
                    throw new OracleException($"check-async: bad method spec '{a}' (want Type::Method)");
                string typeName = spec[..sep], methodName = spec[(sep + 2)..];
                if (!types.TryGetValue(typeName, out var th))
                {
                    Console.Error.WriteLine($"check-async: {Path.GetFileName(dll)}: type {typeName} not found");
                    failures++;
                    continue;
                }
                var methods = md.GetTypeDefinition(th).GetMethods()
                    .Select(md.GetMethodDefinition)
                    .Where(m => md.GetString(m.Name) == methodName).ToList();
                if (methods.Count == 0)
                {
                    Console.Error.WriteLine($"check-async: {Path.GetFileName(dll)}: method {spec} not found");
                    failures++;
                    continue;
                }
                foreach (var m in methods)
                {
                    checks++;
                    bool isAsync = (m.ImplAttributes & AsyncImpl) != 0;
                    Console.WriteLine($"{Path.GetFileName(dll)} {spec} impl=0x{(int)m.ImplAttributes:x4} async={isAsync}");
                    if (isAsync != wantAsync)
                    {
                        Console.Error.WriteLine($"check-async: {Path.GetFileName(dll)}: {spec} has impl flags 0x{(int)m.ImplAttributes:x4}; " +
                                                (wantAsync ? "expected MethodImplOptions.Async (0x2000): runtime async is not on"
                                                           : "did not expect MethodImplOptions.Async (0x2000)"));
                        failures++;
                    }
                }
            }
            pe?.Dispose();
            if (checks == 0 && failures == 0)
                throw new OracleException("check-async: nothing to check");
            return failures == 0 ? 0 : 1;
        }

        // metadata <dll> <Type> ... | --grep <substring>
        public static int Describe(string[] args)
        {
            if (args.Length < 2)
                throw new OracleException("metadata: usage: metadata <dll> <Type>... | --grep <substring>");
            string dll = Args.RequireFile(args[0], "assembly");
            using var pe = new PEReader(File.OpenRead(dll));
            var md = pe.GetMetadataReader();
            var types = TypeMap(md);
            var asm = md.GetAssemblyDefinition();
            Console.WriteLine($"# {Path.GetFileName(dll)} {md.GetString(asm.Name)} {asm.Version} mvid={md.GetGuid(md.GetModuleDefinition().Mvid)}");
            if (args[1] == "--grep")
            {
                foreach (var name in types.Keys.Where(n => n.Contains(args[2], StringComparison.Ordinal)).OrderBy(n => n, StringComparer.Ordinal))
                    Console.WriteLine(name);
                return 0;
            }
            int rc = 0;
            foreach (string typeName in args[1..])
            {
                if (!types.TryGetValue(typeName, out var th))
                {
                    Console.Error.WriteLine($"metadata: type {typeName} not found");
                    rc = 1;
                    continue;
                }
                DescribeType(md, th);
            }
            return rc;
        }

        private static void DescribeType(MetadataReader md, TypeDefinitionHandle th)
        {
            var provider = new NameProvider(md);
            var td = md.GetTypeDefinition(th);
            string baseName = td.BaseType.IsNil ? "-" : provider.NameOf(td.BaseType);
            var layout = td.GetLayout();
            Console.WriteLine($"type {TypeFullName(md, th)} : {baseName}");
            Console.WriteLine($"  attributes: {td.Attributes} (0x{(int)td.Attributes:x8}) token=0x{MetadataTokens.GetToken(th):x8}" +
                              (layout.IsDefault ? "" : $" pack={layout.PackingSize} size={layout.Size}"));
            if (td.GetGenericParameters().Count > 0)
                Console.WriteLine("  generic parameters: " + string.Join(", ", td.GetGenericParameters().Select(g => md.GetString(md.GetGenericParameter(g).Name))));
            foreach (var ca in td.GetCustomAttributes())
                Console.WriteLine("  [" + AttributeName(md, provider, md.GetCustomAttribute(ca)) + "]");
            int index = 0;
            foreach (var fh in td.GetFields())
            {
                var f = md.GetFieldDefinition(fh);
                string type = f.DecodeSignature(provider, null);
                var sb = new StringBuilder();
                sb.Append($"  field #{index++} {md.GetString(f.Name)} : {type}");
                if ((f.Attributes & FieldAttributes.Static) != 0) sb.Append(" static");
                if ((f.Attributes & FieldAttributes.Literal) != 0) sb.Append(" const");
                if ((f.Attributes & FieldAttributes.InitOnly) != 0) sb.Append(" readonly");
                sb.Append($" access={f.Attributes & FieldAttributes.FieldAccessMask}");
                int offset = f.GetOffset();
                if (offset >= 0) sb.Append($" [FieldOffset({offset})]");
                var ch = f.GetDefaultValue();
                if (!ch.IsNil)
                    sb.Append(" = " + ConstantValue(md, md.GetConstant(ch)));
                foreach (var ca in f.GetCustomAttributes())
                    sb.Append(" [" + AttributeName(md, provider, md.GetCustomAttribute(ca)) + "]");
                Console.WriteLine(sb.ToString());
            }
            foreach (var nh in td.GetNestedTypes())
                Console.WriteLine($"  nested {TypeFullName(md, nh)}");
            foreach (var mh in td.GetMethods())
            {
                var m = md.GetMethodDefinition(mh);
                var sig = m.DecodeSignature(provider, null);
                string flags = (m.ImplAttributes & AsyncImpl) != 0 ? " async(0x2000)" : "";
                string stat = (m.Attributes & MethodAttributes.Static) != 0 ? "static " : "";
                Console.WriteLine($"  method {stat}{sig.ReturnType} {md.GetString(m.Name)}({string.Join(", ", sig.ParameterTypes)}) impl=0x{(int)m.ImplAttributes:x4}{flags}");
            }
        }

        private static string AttributeName(MetadataReader md, NameProvider provider, CustomAttribute ca)
        {
            EntityHandle type = ca.Constructor.Kind switch
            {
                HandleKind.MemberReference => md.GetMemberReference((MemberReferenceHandle)ca.Constructor).Parent,
                HandleKind.MethodDefinition => md.GetMethodDefinition((MethodDefinitionHandle)ca.Constructor).GetDeclaringType(),
                _ => default,
            };
            return type.IsNil ? "?" : provider.NameOf(type);
        }

        private static string ConstantValue(MetadataReader md, Constant c)
        {
            var r = md.GetBlobReader(c.Value);
            return c.TypeCode switch
            {
                ConstantTypeCode.Boolean => r.ReadBoolean().ToString(),
                ConstantTypeCode.Char => ((int)r.ReadChar()).ToString(),
                ConstantTypeCode.SByte => r.ReadSByte().ToString(),
                ConstantTypeCode.Byte => r.ReadByte().ToString(),
                ConstantTypeCode.Int16 => r.ReadInt16().ToString(),
                ConstantTypeCode.UInt16 => r.ReadUInt16().ToString(),
                ConstantTypeCode.Int32 => Hex(r.ReadInt32()),
                ConstantTypeCode.UInt32 => Hex(r.ReadUInt32()),
                ConstantTypeCode.Int64 => Hex(r.ReadInt64()),
                ConstantTypeCode.UInt64 => Hex(r.ReadUInt64()),
                ConstantTypeCode.Single => r.ReadSingle().ToString("R"),
                ConstantTypeCode.Double => r.ReadDouble().ToString("R"),
                ConstantTypeCode.String => "\"" + r.ReadUTF16(r.Length) + "\"",
                ConstantTypeCode.NullReference => "null",
                _ => "?",
            };
        }

        private static string Hex(long v) => $"{v} (0x{v:x})";
        private static string Hex(ulong v) => $"{v} (0x{v:x})";

        // Names for signature types, good enough for human-readable layout reports.
        internal sealed class NameProvider : ISignatureTypeProvider<string, object?>
        {
            private readonly MetadataReader _md;
            public NameProvider(MetadataReader md) { _md = md; }

            public string NameOf(EntityHandle h) => h.Kind switch
            {
                HandleKind.TypeDefinition => GetTypeFromDefinition(_md, (TypeDefinitionHandle)h, 0),
                HandleKind.TypeReference => GetTypeFromReference(_md, (TypeReferenceHandle)h, 0),
                HandleKind.TypeSpecification => GetTypeFromSpecification(_md, null, (TypeSpecificationHandle)h, 0),
                _ => "?",
            };

            public string GetArrayType(string elementType, ArrayShape shape) => elementType + "[" + new string(',', shape.Rank - 1) + "]";
            public string GetByReferenceType(string elementType) => "ref " + elementType;
            public string GetFunctionPointerType(MethodSignature<string> signature) =>
                "delegate*<" + string.Join(", ", signature.ParameterTypes.Append(signature.ReturnType)) + ">";
            public string GetGenericInstantiation(string genericType, ImmutableArray<string> typeArguments) =>
                genericType + "<" + string.Join(", ", typeArguments) + ">";
            public string GetGenericMethodParameter(object? genericContext, int index) => "!!" + index;
            public string GetGenericTypeParameter(object? genericContext, int index) => "!" + index;
            public string GetModifiedType(string modifier, string unmodifiedType, bool isRequired) => unmodifiedType;
            public string GetPinnedType(string elementType) => elementType + " pinned";
            public string GetPointerType(string elementType) => elementType + "*";
            public string GetPrimitiveType(PrimitiveTypeCode typeCode) => typeCode.ToString();
            public string GetSZArrayType(string elementType) => elementType + "[]";
            public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => TypeFullName(reader, handle);
            public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind)
            {
                var tr = reader.GetTypeReference(handle);
                string name = reader.GetString(tr.Name);
                if (tr.ResolutionScope.Kind == HandleKind.TypeReference)
                    return GetTypeFromReference(reader, (TypeReferenceHandle)tr.ResolutionScope, rawTypeKind) + "+" + name;
                string ns = reader.GetString(tr.Namespace);
                return ns.Length == 0 ? name : ns + "." + name;
            }
            public string GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind) =>
                reader.GetTypeSpecification(handle).DecodeSignature(this, genericContext);
        }
    }
}
