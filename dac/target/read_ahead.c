/* read_ahead.c - two blocks: the caller's, and the next, read by a second thread meanwhile. */
#include "target/read_ahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* A block read ahead starts this far before the end of the current one, so that an object whose
 * header the current block cuts is whole in the next. */
#define OVERLAP 4096u

struct adac_read_ahead {
	struct adac_target *t;
	size_t block;
	uint8_t *buf[2];
	int cur;                    /* the buffer the caller holds */
	uint64_t next_addr, next_limit; /* adac_read_ahead_next */

	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Under mu: */
	bool quit, busy;            /* busy: the thread reads [req_addr, + req_len) into buf[1 - cur] */
	uint64_t req_addr;
	size_t req_len;
	bool have;                  /* buf[1 - cur] holds [have_base, + have_len) */
	uint64_t have_base;
	size_t have_len;
};

static void *reader(void *arg)
{
	struct adac_read_ahead *ra = arg;
	pthread_mutex_lock(&ra->mu);
	for (;;) {
		while (!ra->busy && !ra->quit)
			pthread_cond_wait(&ra->cv, &ra->mu);
		if (ra->quit)
			break;
		uint64_t addr = ra->req_addr;
		size_t len = ra->req_len;
		uint8_t *dst = ra->buf[1 - ra->cur];
		pthread_mutex_unlock(&ra->mu);
		size_t got = adac_read_concurrent(ra->t, addr, dst, len);
		pthread_mutex_lock(&ra->mu);
		ra->have = true;
		ra->have_base = addr;
		ra->have_len = got;
		ra->busy = false;
		pthread_cond_broadcast(&ra->cv);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

struct adac_read_ahead *adac_read_ahead_new(struct adac_target *t, size_t block)
{
	if (!adac_target_reads_concurrently(t) || block <= OVERLAP)
		return NULL;
	struct adac_read_ahead *ra = calloc(1, sizeof *ra);
	if (!ra)
		return NULL;
	ra->t = t;
	ra->block = block;
	ra->buf[0] = malloc(block);
	ra->buf[1] = malloc(block);
	if (ra->buf[0] && ra->buf[1] && pthread_mutex_init(&ra->mu, NULL) == 0) {
		if (pthread_cond_init(&ra->cv, NULL) == 0) {
			if (pthread_create(&ra->thread, NULL, reader, ra) == 0)
				return ra;
			pthread_cond_destroy(&ra->cv);
		}
		pthread_mutex_destroy(&ra->mu);
	}
	free(ra->buf[0]);
	free(ra->buf[1]);
	free(ra);
	return NULL;
}

void adac_read_ahead_free(struct adac_read_ahead *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->quit = true;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->thread, NULL);
	pthread_cond_destroy(&ra->cv);
	pthread_mutex_destroy(&ra->mu);
	free(ra->buf[0]);
	free(ra->buf[1]);
	free(ra);
}

void adac_read_ahead_next(struct adac_read_ahead *ra, uint64_t addr, uint64_t limit)
{
	ra->next_addr = addr;
	ra->next_limit = limit;
}

static size_t span(uint64_t from, uint64_t limit, size_t block)
{
	return limit > from && limit - from < block ? (size_t)(limit - from) : limit > from ? block : 0;
}

size_t adac_read_ahead_get(struct adac_read_ahead *ra, uint64_t addr, size_t need, uint64_t limit,
                           const uint8_t **data, uint64_t *base)
{
	pthread_mutex_lock(&ra->mu);
	while (ra->busy)
		pthread_cond_wait(&ra->cv, &ra->mu);
	bool hit = ra->have && addr >= ra->have_base && addr - ra->have_base <= ra->have_len &&
	           need <= ra->have_len - (addr - ra->have_base);
	uint64_t wbase = ra->have_base;
	size_t wlen = ra->have_len;
	ra->have = false;
	pthread_mutex_unlock(&ra->mu);
	/* (No read is under way: both buffers are the caller's until the next request.) */
	if (hit) {
		ra->cur = 1 - ra->cur;
		if (limit > wbase && wlen > limit - wbase)
			wlen = (size_t)(limit - wbase);
	} else {
		size_t want = span(addr, limit, ra->block);
		if (want < need)
			want = need <= ra->block ? need : ra->block;
		wbase = addr;
		wlen = adac_read_upto(ra->t, addr, ra->buf[ra->cur], want);
	}
	*data = ra->buf[ra->cur];
	*base = wbase;

	/* What comes next: the rest up to limit, else the range adac_read_ahead_next gave. */
	uint64_t end = wbase + wlen, from = 0;
	size_t len = 0;
	if (wlen > OVERLAP && (len = span(end - OVERLAP, limit, ra->block)) > OVERLAP) {
		from = end - OVERLAP;
	} else if (ra->next_addr && ra->next_addr != wbase) {
		from = ra->next_addr;
		len = span(from, ra->next_limit, ra->block);
		ra->next_addr = 0;
	}
	if (from && len) {
		pthread_mutex_lock(&ra->mu);
		ra->req_addr = from;
		ra->req_len = len;
		ra->busy = true;
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
	}
	return wlen;
}
