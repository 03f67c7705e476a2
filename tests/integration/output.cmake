# Output for people and tools (issue 17): exit codes, JSON documents, coalesced trees, folded
# stacks, graphs, diffs. Needs the `dotnet` fixture of tests/dotnet (scripts/dotnet-setup).
#   output.exit_codes   0 ok, 1 target or analysis error, 2 usage, for every command of the CLI
#   output.json         every command's JSON document against docs/json.md, both ways
#   output.jsonl        ps --jsonl: its lines against docs/json.md, its stacks against ps --json
#   output.coalesce     ps --coalesce folds the deep sample's recursion
#   output.graphs       ps --format folded, --format dot and --svg (Graphviz) on the fanout sample;
#                       the CLI run again with malloc on 2 MB pages, seen with strace
#   output.tools        ps --format folded unchanged into flamegraph.pl and speedscope (headless Chromium)
#   output.diff         asyncdac diff: unchanged (a hang), new and finished, progressed
#   output.install      cmake --install: CLI, plugin, adapter, man pages, ~/.lldbinit line (no samples)
#   output.deb          the .deb installed by apt into a Debian 12 root (debootstrap, cached under
#                       build/debian12): asyncdac and lldb-22's plugin there, on a sample's core
#   output.locals       locals by default: the source's variables; --internals, --all; m_stateFlags
set(_output_tests output.exit_codes output.json output.jsonl output.coalesce output.graphs output.tools output.diff output.locals)
add_adac_test(output.install integration/test_output.py install)
add_adac_test(output.exit_codes integration/test_output.py exit_codes)
add_adac_test(output.json integration/test_output.py json)
add_adac_test(output.jsonl integration/test_output.py jsonl)
add_adac_test(output.coalesce integration/test_output.py coalesce)
add_adac_test(output.graphs integration/test_output.py graphs)
add_adac_test(output.tools integration/test_output.py tools)
add_adac_test(output.diff integration/test_output.py diff)
add_adac_test(output.locals integration/test_output.py locals)
set_tests_properties(${_output_tests} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
# The package of the release build only (a sanitized build's CLI needs the sanitizer runtimes, which
# the .deb does not depend on). The first run makes the Debian root (about 3 minutes, then kept).
if(NOT ADAC_SANITIZE)
  add_adac_test(output.deb integration/test_output.py deb)
  set_tests_properties(output.deb PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli"
                       TIMEOUT 1800 RESOURCE_LOCK debian12)
endif()
