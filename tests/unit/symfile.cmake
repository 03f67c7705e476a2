# The symbol-file writer (dac/symfile): a hand-built model written as DWARF 4 and 5 and read back
# with libdw (unit.symfile), then checked by LLVM's verifier and binutils' readelf.
add_unit_test(symfile ${CMAKE_CURRENT_BINARY_DIR}/symfile)
set_tests_properties(unit.symfile PROPERTIES FIXTURES_SETUP symfile.files)
find_program(LLVM_DWARFDUMP NAMES llvm-dwarfdump-22 REQUIRED)
find_program(READELF NAMES readelf REQUIRED)
foreach(v 4 5)
  add_test(NAME unit.symfile_verify_v${v}
    COMMAND ${CMAKE_COMMAND} -DDWARFDUMP=${LLVM_DWARFDUMP} -DREADELF=${READELF}
            -DFILE=${CMAKE_CURRENT_BINARY_DIR}/symfile/sym${v}.so -DVERSION=${v}
            -P ${CMAKE_SOURCE_DIR}/tests/data/symfile/verify.cmake)
  set_tests_properties(unit.symfile_verify_v${v} PROPERTIES FIXTURES_REQUIRED symfile.files)
endforeach()
