# Signatures and type names: hand-made blobs; then every table, row, name, signature and local
# signature of the samples and the 11.0.0 CoreLib against System.Reflection.Metadata (tests/data/ecma/mdump).
add_unit_test(signature)
add_test(NAME unit.signature_oracle COMMAND test_signature --oracle)
set_tests_properties(unit.signature_oracle PROPERTIES ENVIRONMENT "${ADAC_TEST_ENV}"
  FIXTURES_REQUIRED dotnet LABELS dotnet TIMEOUT 600)
