# LLDB plugin integration tests (included by tests/CMakeLists.txt): lldb-22 -b with the plugin
# from build/lib on the synthetic target, live and from gcore cores.
add_adac_test(lldb.exports integration/test_lldb_exports.py)
add_adac_test(lldb.help integration/test_lldb_help.py)
add_adac_test(lldb.runtime_launch integration/test_lldb_runtime.py launch)
add_adac_test(lldb.runtime_attach integration/test_lldb_runtime.py attach)
add_adac_test(lldb.runtime_core integration/test_lldb_runtime.py core)
add_adac_test(lldb.runtime_process integration/test_lldb_runtime.py process)
add_adac_test(lldb.bt_core integration/test_lldb_bt.py core)
add_adac_test(lldb.bt_live integration/test_lldb_bt.py live)
add_adac_test(lldb.errors_no_process integration/test_lldb_errors.py no_process)
add_adac_test(lldb.errors_not_dotnet integration/test_lldb_errors.py not_dotnet)
add_adac_test(lldb.errors_bad_option integration/test_lldb_errors.py bad_option)
add_adac_test(lldb.errors_running integration/test_lldb_errors.py running)
add_adac_test(lldb.errors_corrupt integration/test_lldb_errors.py corrupt)
# The LLDB data target against the core and pid backends, through the test build of the plugin.
foreach(mode core live)
  add_adac_test(lldb.backend_${mode} integration/test_lldb_backend.py ${mode})
  set_property(TEST lldb.backend_${mode} APPEND PROPERTY ENVIRONMENT
    ADAC_LLDB_PROBE_PLUGIN=$<TARGET_FILE:asyncdac-lldb-probe>)
  if(TARGET adac-probe)
    set_property(TEST lldb.backend_${mode} APPEND PROPERTY ENVIRONMENT ADAC_PROBE=$<TARGET_FILE:adac-probe>)
  endif()
endforeach()
# asyncdac's frames and threads in LLDB itself (issue 11): the frame provider and the OS plugin on
# real .NET 11 samples, live and on createdump cores; lldb-dap over stdio; a foreign LLDB.
set(_lldb_dotnet_tests)
foreach(case running:core running:live nested:core nested:live deep:core fanout:core)
  string(REPLACE ":" ";" _args ${case})
  string(REPLACE ":" "." _name ${case})
  add_adac_test(lldb.frames.${_name} integration/test_lldb_frames.py ${_args})
  list(APPEND _lldb_dotnet_tests lldb.frames.${_name})
endforeach()
set_tests_properties(${_lldb_dotnet_tests} PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
