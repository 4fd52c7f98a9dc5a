// bench/uringlimit.c: the floor of client CPU per request, built and run by bench/run.sh (its uringlimit row).
//   gcc -O2 -o uringlimit bench/uringlimit.c -luring     (Debian: liburing-dev)
// A minimal io_uring HTTP/1.1 keep-alive client (C, liburing); not a product and not a model for hail's code.
//   uringlimit PORT CONNS SECONDS [sqpoll]
// Each connection sends a fixed GET and waits for a full response (Content-Length parsed once: the
// target's responses are all the same size), then sends again. Completions are reaped in batches and
// all new SQEs go in with one io_uring_submit_and_wait per batch.
#include <liburing.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char REQ[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
struct conn { int fd; int have; int want; char buf[4096]; };
static struct io_uring_sqe *sqe(struct io_uring *r) {  // a free SQE, submitting the full ring first if needed
  struct io_uring_sqe *s = io_uring_get_sqe(r);
  if (!s) { io_uring_submit(r); s = io_uring_get_sqe(r); }
  return s;
}

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static int resp_len(const char *b, int n) {  // header length + Content-Length, or -1 if incomplete
  const char *e = memmem(b, n, "\r\n\r\n", 4); if (!e) return -1;
  const char *cl = memmem(b, e - b, "Content-Length: ", 16); int len = cl ? atoi(cl + 16) : 0;
  return (int)(e - b) + 4 + len;
}

int main(int argc, char **argv) {
  int port = atoi(argv[1]), nconn = atoi(argv[2]); double secs = atof(argv[3]);
  struct io_uring ring; struct io_uring_params p = {0};
  if (argc > 4) { p.flags |= IORING_SETUP_SQPOLL; p.sq_thread_idle = 2000; }
  else p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
  int r = io_uring_queue_init_params(4096, &ring, &p); if (r < 0) { fprintf(stderr, "setup: %s\n", strerror(-r)); return 1; }
  struct conn *cs = calloc(nconn, sizeof *cs);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) }; inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  for (int i = 0; i < nconn; i++) {
    cs[i].fd = socket(AF_INET, SOCK_STREAM, 0); int one = 1; setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, 4);
    if (connect(cs[i].fd, (void *)&a, sizeof a)) { perror("connect"); return 1; }
    struct io_uring_sqe *s = sqe(&ring); io_uring_prep_send(s, cs[i].fd, REQ, sizeof REQ - 1, 0); io_uring_sqe_set_data64(s, (uint64_t)i << 1);
  }
  long done = 0; double end = now() + secs; int want = -1;
  while (now() < end) {
    io_uring_submit_and_wait(&ring, 1);
    struct io_uring_cqe *cqe; unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++; uint64_t d = cqe->user_data; struct conn *c = &cs[d >> 1]; int isrecv = d & 1;
      if (cqe->res <= 0) { fprintf(stderr, "op failed: %d\n", cqe->res); return 1; }
      struct io_uring_sqe *s = sqe(&ring);
      if (!isrecv) { io_uring_prep_recv(s, c->fd, c->buf, sizeof c->buf, 0); io_uring_sqe_set_data64(s, d | 1); continue; }
      c->have += cqe->res;
      if (want < 0) want = resp_len(c->buf, c->have);
      if (want < 0 || c->have < want) { io_uring_prep_recv(s, c->fd, c->buf + c->have, sizeof c->buf - c->have, 0); io_uring_sqe_set_data64(s, d); continue; }
      done++; c->have = 0;
      io_uring_prep_send(s, c->fd, REQ, sizeof REQ - 1, 0); io_uring_sqe_set_data64(s, d & ~1ULL);
    }
    io_uring_cq_advance(&ring, seen);
  }
  printf("%ld requests in %.0f s\n", done, secs);
  return 0;
}
