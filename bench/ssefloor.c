// bench/ssefloor.c: the floor of client CPU per streamed token, written for bench/llm.sh. Not a product.
//
//   gcc -O2 -o ssefloor bench/ssefloor.c
//   ssefloor PORT STREAMS SECONDS TOKENS [lag]
//
// STREAMS keep-alive connections to 127.0.0.1:PORT each POST /v1/completions (stream, max_tokens and ignore_eos
// TOKENS) and, when the response's last chunk ("0\r\n\r\n") has come, the next request on the same connection.
// Events are counted by matching "data: {" byte by byte across reads; no JSON is decoded. With "lag" it also reads
// the 19 digits after "hail_sent_ns": in each event (hail serve --openai --send-time) and histograms the read lag:
// CLOCK_REALTIME when the read returned minus when the mock wrote the event, from WARMUP_S (2 s) on (before, the
// client is still connecting and sending its first requests, and reads nothing). One epoll_wait for all connections,
// level-triggered, one read of up to 64 KiB per ready connection. Prints one line:
//   events N requests M seconds S lag_p50_us A lag_p99_us B lag_max_us C
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

// A pattern matched one byte at a time, across reads. None of the patterns below has a proper prefix that is also
// a suffix, so on a mismatch the match restarts at 0 (or 1 when the byte starts the pattern).
struct matcher {
	const char *p;
	int len, at;
};

static int step(struct matcher *m, char c) {
	if (c == m->p[m->at]) {
		if (++m->at == m->len) {
			m->at = 0;
			return 1;
		}
		return 0;
	}
	m->at = c == m->p[0];
	return 0;
}

struct conn {
	int fd;
	struct matcher event, end, stamp;
	int digits;       // >= 0: reading the stamp's digits
	int64_t sent;     // the stamp so far
};

static const char EVENT[] = "data: {", END[] = "\r\n0\r\n\r\n", STAMP[] = "\"hail_sent_ns\":";

#define WARMUP_S 2.0
#define LAG_BUCKETS 100000  // 10 µs buckets up to 1 s; the last collects the rest
static uint64_t lag_hist[LAG_BUCKETS + 1];
static int64_t lag_max;
static uint64_t lag_n;

static int64_t realtime_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static double mono(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double lag_pct(double q) {
	uint64_t want = (uint64_t)(q * lag_n), seen = 0;
	for (int i = 0; i <= LAG_BUCKETS; i++)
		if ((seen += lag_hist[i]) > want) return i * 10.0 + 5;
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: ssefloor PORT STREAMS SECONDS TOKENS [lag]\n");
		return 2;
	}
	int port = atoi(argv[1]), n = atoi(argv[2]), tokens = atoi(argv[4]);
	double secs = atof(argv[3]);
	int lag = argc > 5 && strcmp(argv[5], "lag") == 0;
	char body[256], req[512];
	int bl = snprintf(body, sizeof body,
	                  "{\"model\":\"mock\",\"prompt\":\"hello world\",\"max_tokens\":%d,\"ignore_eos\":true,\"stream\":true}", tokens);
	int rl = snprintf(req, sizeof req,
	                  "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
	                  "Content-Length: %d\r\n\r\n%s", port, bl, body);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int ep = epoll_create1(0);
	struct conn *cs = calloc(n, sizeof *cs);
	for (int i = 0; i < n; i++) {
		struct conn *c = &cs[i];
		c->event = (struct matcher){EVENT, sizeof EVENT - 1, 0};
		c->end = (struct matcher){END, sizeof END - 1, 0};
		c->stamp = (struct matcher){STAMP, sizeof STAMP - 1, 0};
		c->digits = -1;
		c->fd = socket(AF_INET, SOCK_STREAM, 0);
		int one = 1;
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
			perror("connect");
			return 1;
		}
		if (write(c->fd, req, rl) != rl) {
			perror("write");
			return 1;
		}
		struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
		epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
	}
	static char buf[65536];
	struct epoll_event evs[512];
	uint64_t events = 0, requests = 0;
	double start = mono(), end = start + secs;
	while (mono() < end) {
		int k = epoll_wait(ep, evs, 512, 50);
		for (int j = 0; j < k; j++) {
			struct conn *c = &cs[evs[j].data.u32];
			ssize_t r = read(c->fd, buf, sizeof buf);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN) continue;
				fprintf(stderr, "ssefloor: connection %u: %s\n", evs[j].data.u32, r == 0 ? "closed by the server" : strerror(errno));
				return 1;
			}
			int64_t now = lag ? realtime_ns() : 0;
			int measure = lag && mono() - start >= WARMUP_S;
			for (ssize_t i = 0; i < r; i++) {
				char ch = buf[i];
				events += step(&c->event, ch);
				if (step(&c->end, ch)) {
					requests++;
					if (write(c->fd, req, rl) != rl) {
						perror("write");
						return 1;
					}
				}
				if (!lag) continue;
				if (c->digits >= 0) {
					if (ch >= '0' && ch <= '9') {
						c->sent = c->sent * 10 + (ch - '0');
						c->digits++;
						continue;
					}
					int64_t d = now - c->sent;
					if (d < 0) d = 0;
					if (measure) {
						int b = d / 10000;
						lag_hist[b < LAG_BUCKETS ? b : LAG_BUCKETS]++;
						if (d > lag_max) lag_max = d;
						lag_n++;
					}
					c->digits = -1;
				}
				if (step(&c->stamp, ch)) {
					c->digits = 0;
					c->sent = 0;
				}
			}
		}
	}
	printf("events %llu requests %llu seconds %.3f", (unsigned long long)events, (unsigned long long)requests, mono() - start);
	if (lag && lag_n)
		printf(" lag_p50_us %.0f lag_p99_us %.0f lag_max_us %.0f", lag_pct(0.5), lag_pct(0.99), lag_max / 1e3);
	printf("\n");
	return 0;
}
