# dumpheap (GC heap walk, issue 6) against ClrMD + Microsoft's DAC on the real .NET 11.0.0 runtime
# (needs the dotnet fixture of tests/dotnet: scripts/dotnet-setup's runtime pack, samples, oracle).
#   integration.dumpheap           fanout (10,000 chains): createdump and gcore cores, and live
#   integration.dumpheap.flavours  fanout under server regions, workstation segments, server segments
add_adac_test(integration.dumpheap integration/test_dumpheap.py default)
add_adac_test(integration.dumpheap.flavours integration/test_dumpheap.py flavours)
set_tests_properties(integration.dumpheap integration.dumpheap.flavours PROPERTIES
  FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
