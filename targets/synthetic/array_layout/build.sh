#!/usr/bin/env bash
# Rebuilds tests/data/locals/array_layout/ArrayLayout.{dll,pdb} from ArrayLayout.cs with the .NET
# SDK's own Roslyn, deterministically (the same source and compiler give the same bytes). The outputs
# are checked in, so the tests need no SDK; run this only after changing ArrayLayout.cs, then update
# the tokens and expectations in tests/unit/test_locals.c if they moved.
#   targets/synthetic/array_layout/build.sh [csc.dll] [reference-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")")
csc=${1:-$(ls "$dotnet_root"/sdk/*/Roslyn/bincore/csc.dll | sort -V | tail -n1)}
refs=${2:-$(ls -d "$dotnet_root"/packs/Microsoft.NETCore.App.Ref/*/ref/net* | sort -V | tail -n1)}
out=$root/tests/data/locals/array_layout
mkdir -p "$out"
dotnet exec "$csc" -noconfig -nologo -nostdlib -target:library -deterministic -debug:portable -optimize- \
    -pathmap:"$here"=/synthetic/array_layout \
    -out:"$out/ArrayLayout.dll" -pdb:"$out/ArrayLayout.pdb" -r:"$refs/System.Runtime.dll" "$here/ArrayLayout.cs"
echo "wrote $out/ArrayLayout.dll and ArrayLayout.pdb"
