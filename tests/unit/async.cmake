# The async core on the hand-laid runtime of testrts.h / testasync.h (around ArrayLayout.dll and the
# runtime packs' CoreLibs; needs the dotnet fixture): continuations and chains (flat, and the array
# layout over .NET 10's CoreLib), async frames, dispatcher records, blocking records, classic awaiters.
set(ADAC_ARRAY_LAYOUT_DIR ${CMAKE_SOURCE_DIR}/tests/data/locals/array_layout)
add_unit_test(continuation ${ADAC_ARRAY_LAYOUT_DIR})
add_test(NAME unit.continuation_array COMMAND test_continuation ${ADAC_ARRAY_LAYOUT_DIR} array)
set_tests_properties(unit.continuation_array PROPERTIES ENVIRONMENT "${ADAC_TEST_ENV}")
set_tests_properties(unit.continuation unit.continuation_array PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
add_unit_test(async_frame ${ADAC_ARRAY_LAYOUT_DIR})
set_tests_properties(unit.async_frame PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
add_unit_test(dispatcher ${ADAC_ARRAY_LAYOUT_DIR})
set_tests_properties(unit.dispatcher PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
add_unit_test(blocking_info ${ADAC_ARRAY_LAYOUT_DIR})
set_tests_properties(unit.blocking_info PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
add_unit_test(classic_async ${ADAC_ARRAY_LAYOUT_DIR})
set_tests_properties(unit.classic_async PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
