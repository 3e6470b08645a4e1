// SPDX-License-Identifier: Apache-2.0
/*
 * Threads that spend most of their time blocked, 60% of it under
 * chain_a (nanosleep, then a futex wait that times out) and 40% under
 * chain_b (a pipe read that a helper thread answers), and that move
 * between CPUs: each worker flips its affinity to the next CPU every
 * round.  Each blocking call is timed here with CLOCK_MONOTONIC, so the
 * test can compare the profile's off-CPU time with the real one.
 *
 * Usage: offcpu SECONDS OUTFILE
 * Starts on SIGUSR1 (or at once when none comes within 30 s), runs
 * SECONDS, then writes "a_ns=N b_ns=N rounds=N migrations=N" to OUTFILE.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define WORKERS 3
/* chain_a blocks 3 ms a round (two 1.5 ms waits), chain_b 2 ms */
#define A_HALF_NS 1500000L
#define B_NS 2000000L

struct worker {
	pthread_t th, helper;
	int req[2], rep[2]; /* to the helper, back from it */
	uint64_t a_ns, b_ns, rounds, migrations;
};

static double end;
static int ncpu;
static uint32_t futex_word;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

NOINLINE static void sleep_a(void)
{
	struct timespec ts = { 0, A_HALF_NS };

	nanosleep(&ts, NULL);
}

/* a wait nobody wakes: it ends at its timeout */
NOINLINE static void futex_a(void)
{
	struct timespec ts = { 0, A_HALF_NS };

	syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

NOINLINE static uint64_t chain_a(void)
{
	uint64_t t0 = now_ns(), t;

	sleep_a();
	t = now_ns();
	futex_a();
	return (t - t0) + (now_ns() - t);
}

NOINLINE static void read_b(struct worker *w)
{
	char c;

	if (read(w->rep[0], &c, 1) != 1)
		_exit(2);
}

NOINLINE static uint64_t chain_b(struct worker *w)
{
	uint64_t t0;
	char c = 'x';

	if (write(w->req[1], &c, 1) != 1)
		_exit(2);
	t0 = now_ns();
	read_b(w);
	return now_ns() - t0;
}

/* answers each request B_NS later: the worker's read blocks that long */
static void *helper_main(void *arg)
{
	struct worker *w = arg;
	struct timespec ts = { 0, B_NS };
	char c;

	prctl(PR_SET_NAME, "ochelper");
	while (read(w->req[0], &c, 1) == 1) {
		nanosleep(&ts, NULL);
		if (write(w->rep[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void move_on(struct worker *w)
{
	cpu_set_t set;

	if (ncpu < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET((int)(w->rounds % ncpu), &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		w->migrations++;
}

NOINLINE static void *worker_main(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, "ocworker");
	while (wl_now() < end) {
		move_on(w);
		w->a_ns += chain_a();
		w->b_ns += chain_b(w);
		w->rounds++;
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	static struct worker ws[WORKERS];
	uint64_t a = 0, b = 0, rounds = 0, migr = 0;
	struct timespec wait = { 30, 0 };
	sigset_t set;
	FILE *f;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: offcpu SECONDS OUTFILE\n");
		return 2;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	signal(SIGUSR1, on_usr1);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigtimedwait(&set, NULL, &wait);
	end = wl_now() + atof(argv[1]);
	for (i = 0; i < WORKERS; i++) {
		if (pipe(ws[i].req) || pipe(ws[i].rep))
			return 1;
		pthread_create(&ws[i].helper, NULL, helper_main, &ws[i]);
		pthread_create(&ws[i].th, NULL, worker_main, &ws[i]);
	}
	for (i = 0; i < WORKERS; i++) {
		pthread_join(ws[i].th, NULL);
		close(ws[i].req[1]);
		pthread_join(ws[i].helper, NULL);
		a += ws[i].a_ns;
		b += ws[i].b_ns;
		rounds += ws[i].rounds;
		migr += ws[i].migrations;
	}
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "a_ns=%llu b_ns=%llu rounds=%llu migrations=%llu\n",
		(unsigned long long)a, (unsigned long long)b,
		(unsigned long long)rounds, (unsigned long long)migr);
	return fclose(f) ? 1 : 0;
}
