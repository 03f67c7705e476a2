/* awaited.c - see awaited.h. CoreLib's names (System.Private.CoreLib 11.0): Task.m_action,
 * Task+DelayPromise._timer -> TimerQueueTimer._dueTime, Task+WhenAllPromise._tasks and
 * _remainingToComplete (WhenAllPromise<T>: m_tasks and m_count), SemaphoreSlim+TaskNode (.Next),
 * SemaphoreSlim.m_asyncHead and m_currentCount; Socket+AwaitableSocketAsyncEventArgs._completedOperation and
 * _currentSocket -> Socket._localEndPoint, _remoteEndPoint, _rightEndPoint, _isConnected -> IPEndPoint._address
 * (IPAddress._addressOrScopeId, _numbers) and _port, Socket._addressFamily, _socketType, _handle -> SafeHandle.handle;
 * System.IO.Pipelines: Pipe+DefaultPipeReader._pipe -> Pipe._readHead, _readHeadIndex, _readTail, _readTailIndex ->
 * BufferSegment <RunningIndex>k__BackingField. */
#include "async/awaited.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/async_scan.h"
#include "base/limits.h"

#include "async/task.h"
#include "async/thread_pool.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/fielddesc.h"

/* A constant text into buf (truncated): snprintf costs a million chains a tenth of a second. */
static void put_text(char *buf, size_t size, const char *text)
{
	if (!size)
		return;
	size_t n = strlen(text);
	if (n >= size)
		n = size - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A field of the object at obj (its MethodTable mt) by name: a pointer, or 4 bytes. */
static bool field_ptr(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *name, uint64_t *v)
{
	uint32_t off;
	return adac_mt_field_offset(rt, mt, name, &off, NULL) == 0 && adac_read_ptr(rt->t, obj + off, v, NULL) == 0;
}

static bool field_u32(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *name, uint32_t *v)
{
	uint32_t off;
	return adac_mt_field_offset(rt, mt, name, &off, NULL) == 0 && adac_read_u32(rt->t, obj + off, v, NULL) == 0;
}

static bool field_u64(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *name, uint64_t *v)
{
	uint32_t off;
	return adac_mt_field_offset(rt, mt, name, &off, NULL) == 0 && adac_read_u64(rt->t, obj + off, v, NULL) == 0;
}

static bool array_length(struct adac_runtime *rt, uint64_t arr, uint32_t *n)
{
	return arr && adac_object_array_length(rt, arr, n, NULL) == 0;
}

static void describe_delay(struct adac_runtime *rt, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	uint64_t timer = 0, timer_mt = 0;
	uint32_t due;
	if (field_ptr(rt, obj, mt, "_timer", &timer) && timer && adac_object_mt(rt, timer, &timer_mt, NULL) == 0 &&
	    field_u32(rt, timer, timer_mt, "_dueTime", &due)) {
		if (due == UINT32_MAX)
			snprintf(buf, size, "Task.Delay timer 0x%llx, never due", (unsigned long long)timer);
		else
			snprintf(buf, size, "Task.Delay timer 0x%llx, due %u ms after it started", (unsigned long long)timer, due);
	} else {
		put_text(buf, size, "Task.Delay timer");
	}
}

static void describe_when_all(struct adac_runtime *rt, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	uint64_t tasks = 0;
	uint32_t n = 0, remaining = 0;
	/* WhenAllPromise (of Tasks) and WhenAllPromise<T> name them differently. */
	bool plain = field_ptr(rt, obj, mt, "_tasks", &tasks) && field_u32(rt, obj, mt, "_remainingToComplete", &remaining);
	bool generic = !plain && field_ptr(rt, obj, mt, "m_tasks", &tasks) && field_u32(rt, obj, mt, "m_count", &remaining);
	if ((plain || generic) && array_length(rt, tasks, &n) && remaining <= n)
		snprintf(buf, size, "Task.WhenAll: %u of %u done", n - remaining, n);
	else
		put_text(buf, size, "Task.WhenAll");
}

/* "127.0.0.1:55354" of the IPEndPoint at ep (_address: an IPAddress, whose _addressOrScopeId holds
 * an IPv4 address in network order when _numbers, the IPv6 groups, is null; _port). */
static bool endpoint_text(struct adac_runtime *rt, uint64_t ep, char *buf, size_t size)
{
	uint64_t ep_mt = 0, addr = 0, addr_mt = 0, numbers = 1;
	uint32_t port, v4;
	if (!ep || adac_object_mt(rt, ep, &ep_mt, NULL) || !field_ptr(rt, ep, ep_mt, "_address", &addr) || !addr ||
	    !field_u32(rt, ep, ep_mt, "_port", &port) || adac_object_mt(rt, addr, &addr_mt, NULL) ||
	    !field_ptr(rt, addr, addr_mt, "_numbers", &numbers))
		return false;
	if (numbers) {
		snprintf(buf, size, "[IPv6]:%u", port);
		return true;
	}
	if (!field_u32(rt, addr, addr_mt, "_addressOrScopeId", &v4))
		return false;
	snprintf(buf, size, "%u.%u.%u.%u:%u", v4 & 0xff, (v4 >> 8) & 0xff, (v4 >> 16) & 0xff, v4 >> 24, port);
	return true;
}

/* A socket operation in progress (Socket+AwaitableSocketAsyncEventArgs, what Socket.ReceiveAsync,
 * SendAsync and NetworkStream's reads and writes await): _completedOperation (SocketAsyncOperation,
 * set when the operation starts) on _currentSocket, whose _localEndPoint and remote end
 * (_remoteEndPoint, else _rightEndPoint once connected) say which connection. */
static const char *describe_socket(struct adac_runtime *rt, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	/* SocketAsyncOperation: None 0, Accept 1, Connect 2, Disconnect 3, Receive 4, ReceiveFrom 5,
	 * ReceiveMessageFrom 6, Send 7, SendPackets 8, SendTo 9. */
	uint32_t op = 0, connected = 0;
	uint64_t sock = 0, sock_mt = 0, local = 0, remote = 0;
	if (!field_u32(rt, obj, mt, "_completedOperation", &op) || op < 1 || op > 9)
		return NULL;
	const char *kind = op == 1 ? "socket accept" : op == 2 ? "socket connect" : op == 3 ? "socket disconnect"
	                   : op <= 6 ? "socket receive" : "socket send";
	int n = snprintf(buf, size, "%s", kind);
	if (field_ptr(rt, obj, mt, "_currentSocket", &sock) && sock && adac_object_mt(rt, sock, &sock_mt, NULL) == 0) {
		/* A Socket made over a descriptor that is not a socket (System.IO.Pipes' PipeStream on Unix reads
		 * an anonymous pipe through one): _addressFamily and _socketType Unknown (-1), no endpoints. */
		uint32_t family = 0, stype = 0;
		uint64_t handle = 0, handle_mt = 0, fd = 0;
		if (op >= 4 && op <= 9 && field_u32(rt, sock, sock_mt, "_addressFamily", &family) && family == UINT32_MAX &&
		    field_u32(rt, sock, sock_mt, "_socketType", &stype) && stype == UINT32_MAX) {
			kind = op <= 6 ? "pipe receive" : "pipe send";
			n = snprintf(buf, size, "%s", kind);
			if (n >= 0 && (size_t)n < size && field_ptr(rt, sock, sock_mt, "_handle", &handle) && handle &&
			    adac_object_mt(rt, handle, &handle_mt, NULL) == 0 && field_u64(rt, handle, handle_mt, "handle", &fd))
				snprintf(buf + n, size - (size_t)n, ": fd %" PRId64, (int64_t)fd);
			return kind;
		}
		char l[64], r[64];
		bool has_l = field_ptr(rt, sock, sock_mt, "_localEndPoint", &local) && endpoint_text(rt, local, l, sizeof l);
		if (field_ptr(rt, sock, sock_mt, "_remoteEndPoint", &remote) && !remote) {
			uint32_t off;
			uint8_t c = 0;
			if (adac_mt_field_offset(rt, sock_mt, "_isConnected", &off, NULL) == 0 &&
			    adac_read_u8(rt->t, sock + off, &c, NULL) == 0)
				connected = c;
			if (!connected || !field_ptr(rt, sock, sock_mt, "_rightEndPoint", &remote))
				remote = 0;
		}
		bool has_r = remote && endpoint_text(rt, remote, r, sizeof r);
		if (n >= 0 && (size_t)n < size && (has_l || has_r))
			snprintf(buf + n, size - (size_t)n, ": local %s, remote %s", has_l ? l : "?", has_r ? r : "?");
	}
	return kind;
}

/* A System.IO.Pipelines Pipe's reader (Pipe+DefaultPipeReader, the IValueTaskSource PipeReader.ReadAsync
 * returns while no data has come): the bytes the pipe holds that the reader has not consumed, from
 * _readHead/_readHeadIndex to _readTail/_readTailIndex (BufferSegments; RunningIndex when they differ). */
static void describe_pipe_reader(struct adac_runtime *rt, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	uint64_t pipe = 0, pipe_mt = 0, head = 0, tail = 0, head_mt = 0, tail_mt = 0, head_run = 0, tail_run = 0;
	uint32_t head_i = 0, tail_i = 0;
	int n = snprintf(buf, size, "pipe read (System.IO.Pipelines)");
	if (n < 0 || (size_t)n >= size || !field_ptr(rt, obj, mt, "_pipe", &pipe) || !pipe ||
	    adac_object_mt(rt, pipe, &pipe_mt, NULL) || !field_ptr(rt, pipe, pipe_mt, "_readHead", &head) ||
	    !field_ptr(rt, pipe, pipe_mt, "_readTail", &tail))
		return;
	if (!head || !tail) {
		if (!head && !tail)
			snprintf(buf + n, size - (size_t)n, ": 0 bytes unread");
		return;
	}
	if (!field_u32(rt, pipe, pipe_mt, "_readHeadIndex", &head_i) || !field_u32(rt, pipe, pipe_mt, "_readTailIndex", &tail_i))
		return;
	if (head != tail && (adac_object_mt(rt, head, &head_mt, NULL) || adac_object_mt(rt, tail, &tail_mt, NULL) ||
	                     !field_u64(rt, head, head_mt, "<RunningIndex>k__BackingField", &head_run) ||
	                     !field_u64(rt, tail, tail_mt, "<RunningIndex>k__BackingField", &tail_run)))
		return;
	int64_t unread = (int64_t)(tail_run + tail_i) - (int64_t)(head_run + head_i);
	if (unread >= 0)
		snprintf(buf + n, size - (size_t)n, ": %" PRId64 " bytes unread", unread);
}

/* What adac_awaited_describe does with the objects of one MethodTable, decided once from its type
 * name (ps asks about a million objects of two or three types). */
enum describer {
	DESCRIBE_NOTHING, DESCRIBE_DELAY, DESCRIBE_WHEN_ALL, DESCRIBE_WHEN_ANY, DESCRIBE_SOCKET, DESCRIBE_PIPE_READER,
	DESCRIBE_SEMAPHORE_WAITER, DESCRIBE_TASK,
};

#define DESCRIBER_CACHE 64u

struct describer_entry {
	uint64_t mt;
	enum describer d;
	bool has_action;       /* DESCRIBE_TASK: Task.m_action's offset is known */
	uint32_t action_off;
};

static void free_describers(void *p) { free(p); }

static enum describer describer_for(const char *type)
{
	if (starts_with(type, "System.Threading.Tasks.Task+DelayPromise"))
		return DESCRIBE_DELAY;
	if (starts_with(type, "System.Threading.Tasks.Task+WhenAllPromise"))
		return DESCRIBE_WHEN_ALL;
	if (starts_with(type, "System.Threading.Tasks.Task+TwoTaskWhenAnyPromise") ||
	    starts_with(type, "System.Threading.Tasks.Task+WhenAnyPromise"))
		return DESCRIBE_WHEN_ANY;
	if (strcmp(type, "System.Net.Sockets.Socket+AwaitableSocketAsyncEventArgs") == 0)
		return DESCRIBE_SOCKET;
	if (strcmp(type, "System.IO.Pipelines.Pipe+DefaultPipeReader") == 0)
		return DESCRIBE_PIPE_READER;
	if (strcmp(type, "System.Threading.SemaphoreSlim+TaskNode") == 0)
		return DESCRIBE_SEMAPHORE_WAITER;
	if (strcmp(type, "System.Threading.Tasks.Task") == 0 || starts_with(type, "System.Threading.Tasks.Task<"))
		return DESCRIBE_TASK;
	return DESCRIBE_NOTHING;
}

/* The entry of mt (type: its name), from the runtime's cache; a stack copy when it has none. */
static struct describer_entry describer_of(struct adac_runtime *rt, uint64_t mt, const char *type)
{
	struct describer_entry *cache = adac_runtime_slot(rt, ADAC_SLOT_AWAITED);
	if (!cache && (cache = calloc(DESCRIBER_CACHE, sizeof *cache)))
		adac_runtime_set_slot(rt, ADAC_SLOT_AWAITED, cache, free_describers);
	struct describer_entry *e = cache ? &cache[(mt >> 3) % DESCRIBER_CACHE] : NULL;
	if (e && e->mt == mt)
		return *e;
	struct describer_entry n = {.mt = mt, .d = describer_for(type)};
	if (n.d == DESCRIBE_TASK)
		n.has_action = adac_mt_field_offset(rt, mt, "m_action", &n.action_off, NULL) == 0;
	if (e)
		*e = n;
	return n;
}

const char *adac_awaited_describe(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *type, bool has_flags,
                                  uint32_t flags, char *buf, size_t size)
{
	if (!size)
		return NULL;
	buf[0] = '\0';
	if (!obj || !mt || !type)
		return NULL;
	if (has_flags && (flags & ADAC_TASK_COMPLETED_MASK)) {
		/* The pool's facts where the runtime exposes them: starved when work waits and every
		 * worker it may have is busy. */
		const struct adac_thread_pool *tp = adac_thread_pool(rt);
		char facts[160];
		adac_thread_pool_text(tp, facts, sizeof facts);
		if (adac_thread_pool_starved(tp))
			snprintf(buf, size, "completed, but the continuation awaiting it has not run: the thread pool is "
			         "starved (%s)", facts);
		else if (facts[0])
			snprintf(buf, size, "completed, but the continuation awaiting it has not run: a starved thread pool? "
			         "(%s)", facts);
		else
			put_text(buf, size, "completed, but the continuation awaiting it has not run: a starved thread pool?");
		return "completed, awaiter not resumed";
	}
	struct describer_entry e = describer_of(rt, mt, type);
	switch (e.d) {
	case DESCRIBE_DELAY:
		describe_delay(rt, obj, mt, buf, size);
		return "Task.Delay timer";
	case DESCRIBE_WHEN_ALL:
		describe_when_all(rt, obj, mt, buf, size);
		return "Task.WhenAll";
	case DESCRIBE_WHEN_ANY:
		put_text(buf, size, "Task.WhenAny: none done");
		return "Task.WhenAny";
	case DESCRIBE_SOCKET: {
		const char *kind = describe_socket(rt, obj, mt, buf, size);
		if (kind)
			return kind;
		buf[0] = '\0';
		return NULL;
	}
	case DESCRIBE_PIPE_READER:
		describe_pipe_reader(rt, obj, mt, buf, size);
		return "pipe read";
	case DESCRIBE_SEMAPHORE_WAITER:
		put_text(buf, size, "SemaphoreSlim.WaitAsync waiter");
		return "SemaphoreSlim waiter";
	case DESCRIBE_TASK: {
		/* A plain task with no delegate is a promise: only its owner (a TaskCompletionSource, ...)
		 * completes it. */
		uint64_t action = 1;
		if (has_flags && e.has_action && adac_read_ptr(rt->t, obj + e.action_off, &action, NULL) == 0 && !action) {
			put_text(buf, size, "never completed: a promise, such as a TaskCompletionSource's task");
			return "promise never completed";
		}
		return NULL;
	}
	case DESCRIBE_NOTHING:
		break;
	}
	return NULL;
}

/* ---- owners: a SemaphoreSlim's queue of async waiters ---- */

struct waiter_rec {
	uint64_t addr;     /* the key: a TaskNode */
	uint32_t owner;
};

_Static_assert(offsetof(struct waiter_rec, addr) == 0, "the waiter is the record's key");

/* Follows the queue of the semaphore at s->addr from m_asyncHead, recording each node. */
static int read_queue(struct adac_runtime *rt, struct adac_awaited_owners *o, const struct adac_scan_semaphore *s,
                      struct adac_error *err)
{
	uint64_t node = 0, node_mt = 0;
	uint32_t next_off = 0;
	uint32_t count;
	if (!field_ptr(rt, s->addr, s->mt, "m_asyncHead", &node) || !node ||
	    adac_object_mt(rt, node, &node_mt, NULL) || adac_mt_field_offset(rt, node_mt, "Next", &next_off, NULL))
		return 0;
	struct adac_awaited_owner w = {.addr = s->addr, .mt = s->mt};
	w.has_count = field_u32(rt, s->addr, s->mt, "m_currentCount", &count);
	if (w.has_count)
		w.current_count = (int32_t)count;
	uint32_t index = (uint32_t)o->count;
	while (node) {
		if (w.waiters == ADAC_MAX_QUEUE_WAITERS) {
			w.waiters_capped = true;
			break;
		}
		bool added = false;
		struct waiter_rec *r = adac_addr_map_get(&o->by_waiter, node, sizeof *r, &added);
		if (!r)
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory reading semaphore queues");
		if (!added)
			break; /* a cycle, or a node of another queue: the target is inconsistent */
		r->owner = index;
		w.waiters++;
		if (adac_read_ptr(rt->t, node + next_off, &node, NULL))
			break;
	}
	struct adac_awaited_owner *p = realloc(o->owners, (o->count + 1) * sizeof *p);
	if (!p)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory reading semaphore queues");
	o->owners = p;
	o->owners[o->count++] = w;
	return 0;
}

int adac_awaited_owners_build(struct adac_runtime *rt, const struct adac_async_scan *scan,
                              struct adac_awaited_owners *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	for (size_t i = 0; i < scan->semaphore_count; i++)
		if (read_queue(rt, o, &scan->semaphores[i], err)) {
			adac_awaited_owners_free(o);
			return -1;
		}
	return 0;
}

const struct adac_awaited_owner *adac_awaited_owner_of(const struct adac_awaited_owners *o, uint64_t obj)
{
	const struct waiter_rec *r = obj ? adac_addr_map_find(&o->by_waiter, obj) : NULL;
	return r && r->owner < o->count ? &o->owners[r->owner] : NULL;
}

void adac_awaited_owners_free(struct adac_awaited_owners *o)
{
	free(o->owners);
	adac_addr_map_free(&o->by_waiter);
	memset(o, 0, sizeof *o);
}
