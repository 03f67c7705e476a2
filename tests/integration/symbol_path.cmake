# integration.symbol_path (issue 14): cores read with the app's and the runtime's folders gone, through the symbol
# path, file:// and HTTP symbol stores and debuginfod on 127.0.0.1; a mismatched PDB; a truncated
# core. Needs the `dotnet` fixture (scripts/dotnet-setup), objcopy, gdb and debuginfod.
add_adac_test(integration.symbol_path integration/test_symbol_path.py)
set_tests_properties(integration.symbol_path PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")

# integration.container: a live process in a mount namespace of its own (a container), its files
# bind-mounted where the host has other files at the same paths: ps, bt and lldb-22's async ps read
# the process's own files (/proc/<pid>/root). Needs the `dotnet` fixture, unshare and mount.
add_adac_test(integration.container integration/test_container.py)
set_tests_properties(integration.container PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
