# RuntimeTypeSystem, Loader and names on a runtime laid out per the real .NET 11.0.0 descriptor,
# over the real nested.dll and CoreLib images (needs the dotnet fixture's samples).
add_unit_test(methoddesc)
set_tests_properties(unit.methoddesc PROPERTIES FIXTURES_REQUIRED dotnet LABELS dotnet)
