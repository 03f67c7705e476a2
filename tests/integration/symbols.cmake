# Symbol files of managed code (issue 12) on the real .NET 11.0.0 runtime: `asyncdac symbols -o` read
# by llvm-dwarfdump, eu-addr2line and gdb, lldb-22 loading them by itself (bt, frame variable, image
# lookup, source list; live and core) and lldb-dap; checked against the samples' sources,
# expected.json and the oracle. Needs the `dotnet` fixture of tests/dotnet.
add_adac_test(integration.symbols.running integration/test_symbols.py running)
add_adac_test(integration.symbols.chains integration/test_symbols.py chains)
set_tests_properties(integration.symbols.running integration.symbols.chains PROPERTIES
  FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
