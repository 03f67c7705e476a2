# ip2md against Microsoft's DAC on the real .NET 11.0.0 runtime (needs the dotnet fixture of
# tests/dotnet: scripts/dotnet-setup's runtime pack, samples, oracle and ClrMD).
# nested: scenario 1 (C -> B -> A); shapes: many method shapes (generic, struct, ValueTask, ...);
# deep: a 1,000-deep chain through one method.
foreach(run "nested;Debug" "shapes;Release" "deep;Release")
  list(GET run 0 scenario)
  list(GET run 1 config)
  add_adac_test(integration.ip2md.${scenario}.${config} integration/test_ip2md.py ${scenario} ${config})
  set_tests_properties(integration.ip2md.${scenario}.${config} PROPERTIES
    FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
endforeach()
