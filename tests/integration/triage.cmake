# Hang and crash triage (issue 13) on the real .NET 11.0.0 runtime, against the oracle and the samples'
# sources. Included by tests/CMakeLists.txt; needs the `dotnet` fixture (scripts/dotnet-setup).
#   pe.faulted   pe of a faulted task and of its exceptions, dumpobj of an exception (CLI and lldb)
add_adac_test(pe.faulted integration/test_pe.py)
set_tests_properties(pe.faulted PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.leaves    what each chain awaits: Task.Delay, WhenAll, WhenAny, SemaphoreSlim waiters, a promise
add_adac_test(ps.leaves integration/test_ps_leaves.py)
set_tests_properties(ps.leaves PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   report.crash one page: findings, runtime, crashed threads, ps --coalesce, ps --stats
add_adac_test(report.crash integration/test_report.py)
set_tests_properties(report.crash PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   refs.mixed   refs of every object ps prints: the referencing objects and fields (oracle --refs-to)
add_adac_test(refs.mixed integration/test_refs.py)
set_tests_properties(refs.mixed PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   gcroot.roots the roots of objects kept alive by a static, a local, strong and pinned handles, and none
add_adac_test(gcroot.roots integration/test_gcroot.py)
set_tests_properties(gcroot.roots PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   gcroot.server the same under server GC (DOTNET_gcServer=1)
add_adac_test(gcroot.server integration/test_gcroot.py server)
set_tests_properties(gcroot.server PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
