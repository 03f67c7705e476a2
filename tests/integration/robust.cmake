# Hostile input and live targets (issue 15). Needs the `dotnet` fixture of tests/dotnet.
#   robust.core_mutation  random byte/word mutations anywhere in a real core (headers, notes, runtime
#                         data, heap; fixed seed, 40 rounds): ps, bt, frame variable and dumpheap stay
#                         within 10 s of CPU and 1 GiB of RSS, fail in one line, no sanitizer report
#                         (scripts/fuzz core_mutation SECONDS: the long campaign)
#   robust.soak           a live .NET 11 workload checking its own results while the CLI and lldb-22
#                         attach, read and detach in a loop for 20 s, then while it is SIGSTOPped and
#                         while another tracer holds it: no error, never left stopped, no lost work
#                         (scripts/soak SECONDS: the long soak)
set(_robust_tests robust.core_mutation robust.soak)
add_adac_test(robust.core_mutation integration/test_core_mutation.py)
add_adac_test(robust.soak integration/test_soak.py)
set_tests_properties(${_robust_tests} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
