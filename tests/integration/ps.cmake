# ps (issue 6): every pending async operation, on the real .NET 11.0.0 runtime, live and from
# createdump/gcore cores, against the oracle (tests/oracle: ClrMD + Microsoft's DAC) and the samples'
# sources and expected.json. Needs the `dotnet` fixture of tests/dotnet (scripts/dotnet-setup).
#   ps.fanout           10,000 pending chains: all found with their frames, --coalesce groups and
#                       counts, --stats, filters, JSON; continuation set and task -> head links
#   ps.mixed.<config>   classic and runtime-async code awaiting each other: one stitched stack per
#                       documented chain, each edge checked through ClrMD
#   ps.running          a chain running on a thread; stale and sentinel continuations
#   ps.shapes           every chain shape of the shapes sample
#   ps.corrupt          a patched core: a wild Next, a deadlock cycle
#   ps.corrupt_sweep    random words written into a core's continuations, tasks, MethodTables and
#                       MethodDescs (fixed seeds): ps and bt stay well-behaved, untouched chains exact
#   ps.errors           bad arguments; the progress line on a terminal
#   ps.lldb             `async ps` in lldb-22
#   ps.release          ps --pid --release (copy, release, analyse the copy) lists what holding the
#                       process lists; the process runs on
#   ps.gc               ps --pid (held, --release) and dumpheap --pid --stat on a process collecting
#                       garbage back to back: stopped inside a collection, it is let run and stopped
#                       (copied) again until out of it (heap_reruns, scan.reruns), then listed
#                       exactly; bt --locals reads the running chain's locals exactly; it runs on
set(_ps_tests ps.fanout ps.mixed.Debug ps.mixed.Release ps.running ps.shapes ps.corrupt ps.corrupt_sweep ps.errors ps.lldb ps.release ps.gc)
add_adac_test(ps.fanout integration/test_ps.py fanout)
add_adac_test(ps.mixed.Debug integration/test_ps.py mixed Debug)
add_adac_test(ps.mixed.Release integration/test_ps.py mixed Release)
add_adac_test(ps.running integration/test_ps.py running)
add_adac_test(ps.shapes integration/test_ps.py shapes)
add_adac_test(ps.corrupt integration/test_ps.py corrupt)
add_adac_test(ps.corrupt_sweep integration/test_corrupt_sweep.py)
add_adac_test(ps.errors integration/test_ps.py errors)
add_adac_test(ps.lldb integration/test_ps.py lldb)
add_adac_test(ps.release integration/test_ps.py release)
add_adac_test(ps.gc integration/test_ps.py gc)
set_tests_properties(${_ps_tests} PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
