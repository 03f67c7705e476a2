# dumpmd on the real .NET 11.0.0 runtime against Microsoft's DAC (include from tests/CMakeLists.txt
# next to ip2md.cmake). Needs the `dotnet` fixture (scripts/dotnet-setup).
foreach(scenario nested shapes mixed deep fanout running)
  add_adac_test(integration.dumpmd_${scenario} integration/test_dumpmd.py ${scenario})
  set_tests_properties(integration.dumpmd_${scenario} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
endforeach()
