/* cmd_locks.c - `locks`: the locks held in the process, who holds them and who waits (SOS syncblk). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/lock_view.h"

const struct adac_command_info adac_cmd_locks_info = {
	.name = "locks",
	.summary = "List the locks held: Monitors (lock statements) and System.Threading.Locks, "
	           "with the thread holding each and how many threads wait for it",
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
		"holder's OS thread id, as `bt --thread` takes it. Under a lock, each thread\n"
		"found waiting for it (blocked in Lock.TryEnterSlow with the lock's address in\n"
		"its registers or in its lock frames' stack):\n"
		"  waiting: thread tid <T> (managed thread <M>)\n"
		"and threads that wait for each other's locks are printed as a cycle:\n"
		"  deadlock: thread tid <A> (...) waits for <lock> held by thread tid <B>\n"
		"      (...), which waits for <lock> held by thread tid <A> (...)\n"
		"\n"
		"Options:\n"
		"  -j, --json   One JSON document (docs/json.md)\n",
};

int adac_cmd_locks(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err)
{
	(void)fe;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json"))
			json = true;
		else
			return adac_opt_unknown("locks", argv[i], err);
	}
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_locks_print(rt, json, out, err);
	adac_runtime_release(rt);
	return rc;
}
