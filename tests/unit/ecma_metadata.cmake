# ECMA-335 reader: hand-built metadata, corruption, seeded mutations; nested.dll flat vs mapped
# (the dotnet fixture builds it).
add_unit_test(ecma_metadata)
set_tests_properties(unit.ecma_metadata PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
