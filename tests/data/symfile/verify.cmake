# verify.cmake - checks a symbol file written by test_symfile with LLVM's DWARF verifier
# and readelf: no verifier error, the sections and symbols the writer promises, and a lookup by
# address that gives the method and its line.
#   cmake -DDWARFDUMP=... -DREADELF=... -DFILE=sym5.so -DVERSION=5 -P verify.cmake
function(run out)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed (${rc}):\n${text}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(expect text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "missing '${what}' in:\n${text}")
  endif()
endfunction()

run(verify ${DWARFDUMP} --verify ${FILE})
expect("${verify}" "No errors.")
string(FIND "${verify}" "warning" warned)
if(NOT warned EQUAL -1)
  message(FATAL_ERROR "llvm-dwarfdump --verify warned:\n${verify}")
endif()

run(headers ${READELF} -hlSW ${FILE})
expect("${headers}" "DYN (Shared object file)")
expect("${headers}" "Advanced Micro Devices X86-64")
expect("${headers}" "LOAD           0x000000 0x00007f0000001000 0x00007f0000001000 0x000000 0x000120 R E 0x1")
foreach(s .text .text.1 .note.gnu.build-id .debug_abbrev .debug_info .debug_str .debug_line .debug_aranges .symtab)
  expect("${headers}" " ${s} ")
endforeach()
if(VERSION EQUAL 5)
  expect("${headers}" " .debug_loclists ")
  expect("${headers}" " .debug_rnglists ")
else()
  expect("${headers}" " .debug_loc ")
  expect("${headers}" " .debug_ranges ")
endif()

run(symbols ${READELF} -sW ${FILE})
expect("${symbols}" "00007f0000001000   128 FUNC    GLOBAL DEFAULT    1 App.Program.Main(System.String[])")
expect("${symbols}" "00007f0000200000    16 FUNC    GLOBAL DEFAULT    2 Lib.Box.Get()")

run(lookup ${DWARFDUMP} --lookup=0x7f0000001020 ${FILE})
expect("${lookup}" "version = 0x000${VERSION}")
expect("${lookup}" "DW_AT_name\t(\"App.Program.Main(System.String[])\")")
expect("${lookup}" "Line info: file '/src/Program.cs', line 11, column 9")
