/* cmd_locks.c - `locks`: the locks held in the process, who holds them and who waits (SOS syncblk). */
#include "commands/command.h"
#include "view/lock_view.h"

const struct adac_command_info adac_cmd_locks_info = {
	.name = "locks",
	.summary = "List the locks held: Monitors (lock statements) and System.Threading.Locks, "
	           "with the thread holding each and the threads waiting for it or in Monitor.Wait",
	.syntax = "[--json]",
	.details =
		"Reads the runtime's sync table and walks the GC heap once (SOS syncblk and\n"
		"dumpheap -thinlock together) and prints one line per lock held:\n"
		"  lock <address> <type> (Monitor): held by thread tid <T> (managed thread <M>),\n"
		"      entered <n> times; <w> threads waiting\n"
		"A Monitor (lock (obj), Monitor.Enter) nobody contended for is a thin lock in\n"
		"the object's header (\"Monitor, thin lock\": nobody waits for it); once a thread\n"
		"waits, the runtime gives the object a sync block and a System.Threading.Lock,\n"
		"which counts its waiting threads. A System.Threading.Lock used directly (lock\n"
		"on a Lock, Lock.Enter, EnterScope) is listed by its own address. <T> is the\n"
		"holder's OS thread id, as `bt --thread` takes it. What each thread waits for is\n"
		"its blocking record, which the runtime keeps for debuggers. Under a lock, each\n"
		"thread waiting to enter it, and each thread in Monitor.Wait on it:\n"
		"  waiting: thread tid <T> (managed thread <M>)\n"
		"  in Monitor.Wait: thread tid <T> (managed thread <M>)[, timeout <n> ms]\n"
		"A Monitor nobody holds while threads wait in Monitor.Wait for its pulse:\n"
		"  lock <address> <type> (Monitor): not held; <n> threads in Monitor.Wait\n"
		"Threads that wait for each other's locks are printed as a cycle:\n"
		"  deadlock: thread tid <A> (...) waits for <lock> held by thread tid <B>\n"
		"      (...), which waits for <lock> held by thread tid <A> (...)\n"
		"So are threads waiting for each other through a task: one waits synchronously\n"
		"(Task.Wait(), .Result) for a task whose stack runs on the other, which waits\n"
		"for a lock the first holds, or for another such task (sync-over-async under a\n"
		"lock). When a thread waits for a task, the heap's stacks are scanned (as `ps`\n"
		"does) to find the thread its stack runs on:\n"
		"  deadlock: thread tid <A> (...) waits synchronously for task <task> (...),\n"
		"      whose stack runs on thread tid <B> (...), which waits for <lock> held\n"
		"      by thread tid <A> (...)\n"
		"\n"
		"Options:\n"
		"  -j, --json   One JSON document (docs/json.md)\n",
};

int adac_cmd_locks(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err)
{
	(void)fe;
	return adac_command_json_view("locks", t, argc, argv, adac_locks_print, out, err);
}
