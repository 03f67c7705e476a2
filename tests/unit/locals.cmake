# Awaited locals and value formatting (dac/async/locals.c, dac/view/locals_view.c,
# dac/view/value_format.c) on the synthetic array-layout target (targets/synthetic/array_layout, its
# built assembly in tests/data/locals): a runtime laid out in a memory target around ArrayLayout.dll
# and the real CoreLib (tests/unit/testrts.h; needs the dotnet fixture's runtime pack; fails without it).
add_unit_test(locals ${CMAKE_SOURCE_DIR}/tests/data/locals/array_layout)
set_tests_properties(unit.locals PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
