// bench/sendfloor.c: the floor of server CPU per streamed chunk, written for bench/llm.sh (part "server"). Not a
// product.
//
//   gcc -O2 -o sendfloor bench/sendfloor.c
//   sendfloor PORT ITL_US TICK_US
//
// What `hail serve --openai` does for a streamed /v1/completions request, and nothing else, in C. It listens on
// 127.0.0.1:PORT and reads each connection's requests (keep-alive, one at a time) to the end of their
// Content-Length body, looking only for "max_tokens":N and "include_usage":true (no other JSON is read). The
// response head goes out at once, then N chunks: each the mock's completions chunk, byte for byte the same size,
// one write each; the last with "finish_reason":"length", the [DONE] event and the body's end in the same write.
// With "include_usage":true, as the mock then does, every chunk carries "usage":null and a usage chunk goes before
// [DONE] (the mock's for a prompt of 2 tokens, whatever the prompt; built for the latest max_tokens, so a run's
// requests should all ask for the same). The first chunk comes a uniform draw in [0, ITL) after the request (the
// mock's stagger), each next one ITL after the one before, on the stream's own timeline. One thread: one epoll for
// the listener and the connections, and a heap of streams by their next chunk; it waits (epoll_pwait2, a
// nanosecond timeout) until the earliest is due, at most once per TICK_US after the last wake-up that wrote, and
// then writes every chunk due, as the mock's shard does. A write that would block, or fails, closes the
// connection. Prints nothing; SIGTERM ends it. bench/llm.sh reads its CPU from /proc/PID/stat and the chunks
// from the client.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXCONN 65536

struct conn {
	int fd;
	int64_t next;   // the next chunk's time (ns, CLOCK_MONOTONIC); 0: not streaming
	int left;       // chunks still to send
	int usage;      // the request asked for usage
	int heap;       // its index in the heap, -1: not in it
	int have;       // request bytes in req
	char req[1024];
};

static struct conn *conns[MAXCONN];
static struct conn *heap[MAXCONN];
static int nheap;

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void swap(int i, int j) {
	struct conn *a = heap[i];
	heap[i] = heap[j], heap[j] = a;
	heap[i]->heap = i, heap[j]->heap = j;
}

static void up(int i) {
	for (; i > 0 && heap[(i - 1) / 2]->next > heap[i]->next; i = (i - 1) / 2) swap(i, (i - 1) / 2);
}

static void down(int i) {
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < nheap && heap[l]->next < heap[m]->next) m = l;
		if (l + 1 < nheap && heap[l + 1]->next < heap[m]->next) m = l + 1;
		if (m == i) return;
		swap(i, m);
		i = m;
	}
}

static void push(struct conn *c) {
	c->heap = nheap;
	heap[nheap++] = c;
	up(c->heap);
}

static void pop_at(int i) {
	heap[i]->heap = -1;
	if (i != --nheap) {
		heap[i] = heap[nheap];
		heap[i]->heap = i;
		down(i);
		up(i);
	}
}

static void drop(struct conn *c) {
	if (c->heap >= 0) pop_at(c->heap);
	close(c->fd);
	conns[c->fd] = NULL;
	free(c);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static const char HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n";
// chunk and last, without usage ([0]) and with it ([1])
static char chunk[2][512], last[2][1024];
static int chunk_len[2], last_len[2];
static int64_t itl, tick;
static int stream_tokens = -1; // the templates' length

// event fills out with a chunk of the HTTP/1.1 chunked body carrying the mock's completions event, then tail.
static int event(char *out, size_t size, const char *finish, const char *usage, const char *tail) {
	char ev[400];
	int n = snprintf(ev, sizeof ev,
	                 "data: {\"id\":\"cmpl-0000000000000001\",\"object\":\"text_completion\",\"created\":1796438516,"
	                 "\"model\":\"mock\",\"choices\":[{\"index\":0,\"text\":\" tok\",\"logprobs\":null,\"finish_reason\":%s,"
	                 "\"stop_reason\":null}]%s}\n\n",
	                 finish, usage);
	return snprintf(out, size, "%x\r\n%s\r\n%s", n, ev, tail);
}

// templates makes the chunks for streams of tokens tokens.
static void templates(int tokens) {
	static const char done[] = "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";
	char ev[300], tail[400];
	int n = snprintf(ev, sizeof ev,
	                 "data: {\"id\":\"cmpl-0000000000000001\",\"object\":\"text_completion\",\"created\":1796438516,"
	                 "\"model\":\"mock\",\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"total_tokens\":%d,"
	                 "\"completion_tokens\":%d}}\n\n",
	                 tokens + 2, tokens);
	snprintf(tail, sizeof tail, "%x\r\n%s\r\n%s", n, ev, done);
	chunk_len[0] = event(chunk[0], sizeof chunk[0], "null", "", "");
	last_len[0] = event(last[0], sizeof last[0], "\"length\"", "", done);
	chunk_len[1] = event(chunk[1], sizeof chunk[1], "null", ",\"usage\":null", "");
	last_len[1] = event(last[1], sizeof last[1], "\"length\"", ",\"usage\":null", tail);
}

// request handles c's readable bytes: a complete request starts its stream.
static void request(struct conn *c) {
	for (;;) {
		ssize_t r = read(c->fd, c->req + c->have, sizeof c->req - 1 - c->have);
		if (r <= 0) {
			if (r < 0 && errno == EAGAIN) return;
			drop(c);
			return;
		}
		c->have += r;
		c->req[c->have] = 0;
		char *end = strstr(c->req, "\r\n\r\n");
		if (!end) {
			if (c->have == sizeof c->req - 1) {
				drop(c);
				return;
			}
			continue;
		}
		char *cl = strcasestr(c->req, "content-length:");
		int body = cl && cl < end ? atoi(cl + 15) : 0, whole = end + 4 - c->req + body;
		if (c->have < whole) continue;
		char *mt = strstr(end, "\"max_tokens\":");
		int tokens = mt ? atoi(mt + 13) : 16;
		if (c->next || c->have > whole || tokens < 1) { // pipelined or odd: not this floor's business
			drop(c);
			return;
		}
		c->have = 0;
		if (write(c->fd, HEAD, sizeof HEAD - 1) != sizeof HEAD - 1) {
			drop(c);
			return;
		}
		if (tokens != stream_tokens) {
			templates(tokens);
			stream_tokens = tokens;
		}
		c->usage = strstr(end, "\"include_usage\":true") != NULL;
		c->left = tokens;
		c->next = now_ns() + (int64_t)(next_rand() % (uint64_t)itl);
		push(c);
		return;
	}
}

// fire writes c's chunk that is due; false when its stream (or connection) has ended.
static int fire(struct conn *c) {
	const char *b = c->left == 1 ? last[c->usage] : chunk[c->usage];
	int n = c->left == 1 ? last_len[c->usage] : chunk_len[c->usage];
	if (write(c->fd, b, n) != n) {
		drop(c);
		return 0;
	}
	if (--c->left == 0) {
		c->next = 0;
		pop_at(c->heap);
		return 0;
	}
	c->next += itl;
	return 1;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: sendfloor PORT ITL_US TICK_US\n");
		return 2;
	}
	itl = atoll(argv[2]) * 1000, tick = atoll(argv[3]) * 1000;
	if (itl <= 0 || tick < 0) {
		fprintf(stderr, "sendfloor: ITL_US must be > 0 and TICK_US >= 0\n");
		return 2;
	}
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, 4096) != 0) {
		perror("sendfloor: listen");
		return 1;
	}
	int ep = epoll_create1(0);
	struct epoll_event e = {.events = EPOLLIN, .data.fd = ls};
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &e);
	struct epoll_event evs[512];
	int64_t woke = 0;
	for (;;) {
		struct timespec ts, *tp = NULL;
		if (nheap > 0) {
			int64_t at = heap[0]->next, wait;
			if (at < woke + tick) at = woke + tick;
			wait = at - now_ns();
			if (wait < 0) wait = 0;
			ts.tv_sec = wait / 1000000000, ts.tv_nsec = wait % 1000000000;
			tp = &ts;
		}
		int n = epoll_pwait2(ep, evs, 512, tp, NULL);
		if (n < 0 && errno != EINTR) {
			perror("sendfloor: epoll_pwait2");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == ls) {
				int c;
				while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					if (c >= MAXCONN) {
						close(c);
						continue;
					}
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					struct conn *k = calloc(1, sizeof *k);
					k->fd = c, k->heap = -1;
					conns[c] = k;
					struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				}
			} else if (conns[fd]) {
				request(conns[fd]);
			}
		}
		int64_t now = now_ns();
		if (nheap == 0 || heap[0]->next > now) continue;
		woke = now;
		while (nheap > 0 && heap[0]->next <= now) {
			struct conn *c = heap[0];
			if (fire(c)) down(0);
		}
	}
}
