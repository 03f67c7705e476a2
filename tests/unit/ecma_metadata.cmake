# ECMA-335 reader: hand-built metadata, corruption, seeded mutations; nested.dll flat vs mapped when built.
add_unit_test(ecma_metadata)
