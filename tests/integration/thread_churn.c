/* thread_churn.c - a debuggee whose threads come and go: three long-lived workers (one spinning,
 * two sleeping) and one thread that starts and joins short-lived threads without pause. Tests
 * attach to it repeatedly to check that every thread is held, including ones born meanwhile.
 * Prints READY once the workers run. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long counter;

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		counter++;
	return NULL;
}

static void *nap(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *brief(void *arg)
{
	(void)arg;
	counter++;
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	pthread_create(&t[0], NULL, spin, NULL);
	pthread_create(&t[1], NULL, nap, NULL);
	pthread_create(&t[2], NULL, nap, NULL);
	pthread_create(&t[3], NULL, churn, NULL);
	printf("READY pid=%d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
