# Hang and crash triage (issue 13) on the real .NET 11.0.0 runtime, against the oracle and the samples'
# sources. Included by tests/CMakeLists.txt; needs the `dotnet` fixture (scripts/dotnet-setup).
#   pe.faulted   pe of a faulted task and of its exceptions, dumpobj of an exception (CLI and lldb)
add_adac_test(pe.faulted integration/test_pe.py)
set_tests_properties(pe.faulted PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.leaves    what each chain awaits: Task.Delay, WhenAll, WhenAny, SemaphoreSlim waiters, a promise
add_adac_test(ps.leaves integration/test_ps_leaves.py)
set_tests_properties(ps.leaves PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   report.crash one page: findings, runtime, crashed threads, ps --coalesce, ps --stats
add_adac_test(report.crash integration/test_report.py)
set_tests_properties(report.crash PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   refs.mixed   refs of every object ps prints: the referencing objects and fields (oracle --refs-to)
add_adac_test(refs.mixed integration/test_refs.py)
set_tests_properties(refs.mixed PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.convoy    what chains await, by identity: one SemaphoreSlim's 1000 waiters, 500 distinct promises, one shared
add_adac_test(ps.convoy integration/test_ps_convoy.py)
set_tests_properties(ps.convoy PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.deadlock  an await cycle A -> B -> C -> A printed as one line, in ps and report's findings
add_adac_test(ps.deadlock integration/test_ps_deadlock.py)
set_tests_properties(ps.deadlock PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.syncwait  threads blocked in Task.Wait/.Result/GetResult on a chain: ps, bt --thread, report
add_adac_test(ps.syncwait integration/test_ps_syncwait.py)
set_tests_properties(ps.syncwait PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   locks        Monitors (a sync block's Lock, a thin lock) and a System.Threading.Lock held and waited
#                for: locks (core, --pid, lldb-22), report, the oracle's sync blocks and thin locks
add_adac_test(locks integration/test_locks.py)
set_tests_properties(locks PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.completed ps --completed: the completed async tasks still on the heap (the faulted sample's task)
add_adac_test(ps.completed integration/test_ps_completed.py)
set_tests_properties(ps.completed PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   gcroot.roots the roots of objects kept alive by a static, a local, strong and pinned handles, and none
add_adac_test(gcroot.roots integration/test_gcroot.py)
set_tests_properties(gcroot.roots PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   gcroot.server the same under server GC (DOTNET_gcServer=1)
add_adac_test(gcroot.server integration/test_gcroot.py server)
set_tests_properties(gcroot.server PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.starved   a completed task whose continuation waits in a starved pool's queue: ps, report, the pool's numbers
add_adac_test(ps.starved integration/test_ps_starved.py)
set_tests_properties(ps.starved PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   threadpool   the pool's threads and queued items (starved, deadlock; CLI and lldb-22), against the oracle's ClrThreadPool and items
add_adac_test(threadpool integration/test_threadpool.py)
set_tests_properties(threadpool PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   clrthreads   the managed threads (deadlock, crash; CLI and lldb-22), against the oracle's ClrRuntime.Threads
add_adac_test(clrthreads integration/test_clrthreads.py)
set_tests_properties(clrthreads PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   pstacks      the threads' stacks merged (deadlock, starved; --all; CLI and lldb-22), against the oracle's stacks
add_adac_test(pstacks integration/test_pstacks.py)
set_tests_properties(pstacks PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.sockets   chains awaiting socket receives over 127.0.0.1: the operation and both endpoints
add_adac_test(ps.sockets integration/test_ps_sockets.py)
set_tests_properties(ps.sockets PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
#   ps.pipes     chains awaiting a System.IO.Pipelines Pipe read (bytes unread) and an anonymous pipe read (fd)
add_adac_test(ps.pipes integration/test_ps_pipes.py)
set_tests_properties(ps.pipes PROPERTIES FIXTURES_REQUIRED dotnet LABELS "dotnet;needs-cli")
