# Awaited locals (issue 5): `bt --locals`, `frame select` / `frame variable` on the real .NET 11.0.0
# runtime, live and from createdump cores, through the CLI and lldb-22, against the samples' sources
# and expected.json (chain heads from the oracle). Needs the `dotnet` fixture of tests/dotnet.
#   integration.locals.<nested|shapes>.<Debug|Release>   every local at every await
#   integration.locals.running                           frames of a thread's running chain
#   integration.locals.corrupt                           State out of range, absurd/truncated async info
set(_locals_tests)
foreach(scenario nested shapes)
  foreach(config Debug Release)
    add_adac_test(integration.locals.${scenario}.${config} integration/test_locals.py ${scenario} ${config})
    list(APPEND _locals_tests integration.locals.${scenario}.${config})
  endforeach()
endforeach()
add_adac_test(integration.locals.running integration/test_locals.py running)
add_adac_test(integration.locals.corrupt integration/test_locals.py corrupt)
list(APPEND _locals_tests integration.locals.running integration.locals.corrupt)
set_tests_properties(${_locals_tests} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
