# bt (issue 4): async backtraces on the real .NET 11.0.0 runtime, live and from createdump/gcore
# cores, through the CLI and lldb-22, against the oracle (tests/oracle: ClrMD + Microsoft's DAC) and
# the samples' expected.json. Included by tests/CMakeLists.txt; needs the `dotnet` fixture of
# tests/dotnet (scripts/dotnet-setup: runtime pack, samples, oracle).
#   bt.nested.<config>   scenario 1, C -> B -> A: text, JSON, awaiting line, all front ends
#   bt.deep              the 1,000-deep chain; -c and --depth
#   bt.running.<mode>    the chain a thread is running, after its physical frames (live and cores)
#   bt.shapes.<config>   every chain shape; bt.fanout: 64 of 10,000 chains
#   bt.corrupt           patched copies of a core: cycle, wild Next, unreadable ResumeInfo, ...
#   bt.errors            bad input: exact one-line errors, exit codes
#   bt.net10             .NET 10 (array layout): frames through the resume-stub route
#   bt.address           every object address ps prints, through bt --address: ps's stack for it
#   bt.crash.<mode>      a kernel core of a SIGABRT crash: signalled thread, stop reason, exception
set(_bt_tests)
foreach(config Debug Release)
  add_adac_test(bt.nested.${config} integration/test_bt_nested.py ${config})
  add_adac_test(bt.shapes.${config} integration/test_bt_chains.py shapes ${config})
  list(APPEND _bt_tests bt.nested.${config} bt.shapes.${config})
endforeach()
add_adac_test(bt.deep integration/test_bt_deep.py)
add_adac_test(bt.fanout integration/test_bt_chains.py fanout Release)
add_adac_test(bt.corrupt integration/test_bt_corrupt.py)
add_adac_test(bt.errors integration/test_bt_errors.py)
add_adac_test(bt.net10 integration/test_bt_net10.py)
list(APPEND _bt_tests bt.deep bt.fanout bt.corrupt bt.errors bt.net10)
add_adac_test(bt.address integration/test_bt_address.py)
list(APPEND _bt_tests bt.address)
foreach(mode failfast unhandled)
  add_adac_test(bt.crash.${mode} integration/test_bt_crash.py ${mode})
  list(APPEND _bt_tests bt.crash.${mode})
endforeach()
foreach(mode park sigstop segv failfast throw)
  add_adac_test(bt.running.${mode} integration/test_bt_running.py ${mode})
  list(APPEND _bt_tests bt.running.${mode})
endforeach()
set_tests_properties(${_bt_tests} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
