# Symbol paths, SSQP keys, file:// stores, PE identity and PDBs found through a symbol path.
add_unit_test(symbols ${CMAKE_SOURCE_DIR}/tests/data/pdb)
