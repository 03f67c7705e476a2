# dumpmd on the real .NET 11.0.0 runtime against Microsoft's DAC (include from tests/CMakeLists.txt
# next to ip2md.cmake). Needs the `dotnet` fixture (scripts/dotnet-setup).
foreach(scenario nested shapes mixed deep fanout running)
  add_adac_test(integration.dumpmd_${scenario} integration/test_dumpmd.py ${scenario})
  # fanout names every method of 10,000 chains through the oracle too: ~90 s normally, ~5x that
  # under ASan on 2 cores.
  set_tests_properties(integration.dumpmd_${scenario} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli"
    TIMEOUT 1500)
endforeach()
