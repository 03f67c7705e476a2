# Unit tests of the nibble reader, the DebugInfo decoder and the portable PDB reader.
add_unit_test(nibble)
add_unit_test(debuginfo ${CMAKE_SOURCE_DIR}/tests/data/debuginfo)
add_unit_test(pdb ${CMAKE_SOURCE_DIR}/tests/data/pdb)
