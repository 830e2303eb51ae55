// SPDX-License-Identifier: GPL-2.0
/*
 * labtool: the boot lab's guest helper, linked statically into the initramfs.
 *   labtool efault     system calls with bad user pointers must fail with EFAULT
 *                      (each one takes an exception-table fixup in the kernel)
 *   labtool mmap FILE  the bytes of FILE through mmap() equal those through read()
 *   labtool tcp BYTES  a child sends BYTES over a loopback TCP connection; the
 *                      checksums on both sides agree
 *   labtool udp N      N datagrams sent to a loopback UDP echo child come back
 *   labtool rpc tcp4|tcp6|udp4 N
 *                      N calls, a request and its reply, to a loopback server child:
 *                      over TCP (IPv4 or IPv6) a connection each, over UDP datagrams
 *   labtool unix N     N request/reply round trips over a unix stream socket, then N
 *                      over a unix datagram socket, both bound to paths
 *   labtool profile-start, labtool profile-stop
 *                      execute the marker nops that switch kbolt's QEMU plugin on and
 *                      off (kbolt/record/qemu_plugin.c): "nopl 0x3153424b(%rax)" and
 *                      "nopl 0x3053424b(%rax)", "KBS1" and "KBS0" in their bytes
 *   labtool build-id   print the running kernel's GNU build-id in hex, from the ELF
 *                      notes in /sys/kernel/notes (include/linux/elfnote.h)
 * Exit 0 when every check holds; failures are printed as "# ..." lines.  Raw syscall()s:
 * the compiler must not see (and warn about) the deliberately bad buffers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BAD ((void *)16)	/* never mapped: the first page */

static int failures;

static void expect_efault(const char *what, long ret)
{
	if (ret == -1 && errno == EFAULT)
		return;
	printf("# %s: returned %ld, errno %d (%s), expected EFAULT\n", what, ret, errno,
	       strerror(errno));
	failures++;
}

static int efault(void)
{
	int fd = open("/proc/version", O_RDONLY), p[2];
	struct iovec iov = { BAD, 64 };
	struct stat st;

	if (fd < 0 || pipe(p))
		return 1;
	expect_efault("read into a bad buffer", syscall(SYS_read, fd, BAD, 64));
	if (write(p[1], "abc", 3) != 3)
		return 1;
	expect_efault("read from a pipe into a bad buffer", syscall(SYS_read, p[0], BAD, 3));
	expect_efault("write from a bad buffer", syscall(SYS_write, p[1], BAD, 16));
	expect_efault("stat of a bad path", syscall(SYS_stat, BAD, &st));
	expect_efault("fstat into a bad buffer", syscall(SYS_fstat, fd, BAD));
	expect_efault("clock_gettime into a bad buffer",
		      syscall(SYS_clock_gettime, CLOCK_MONOTONIC, BAD));
	expect_efault("readv with a bad iovec", syscall(SYS_readv, fd, BAD, 1));
	expect_efault("readv into a bad buffer", syscall(SYS_readv, fd, &iov, 1));
	expect_efault("uname into a bad buffer", syscall(SYS_uname, BAD));
	expect_efault("pipe into a bad array", syscall(SYS_pipe, BAD));
	close(fd);
	return failures != 0;
}

static int map_compare(const char *path)
{
	int fd = open(path, O_RDONLY);
	unsigned long sum_map = 0, sum_read = 0;
	unsigned char buf[65536], *m;
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) || !st.st_size)
		return 1;
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	for (off_t i = 0; i < st.st_size; i++)
		sum_map = sum_map * 31 + m[i];
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			sum_read = sum_read * 31 + buf[i];
	munmap(m, st.st_size);
	close(fd);
	if (sum_map != sum_read)
		printf("# mmap and read disagree on %s\n", path);
	return sum_map != sum_read;
}

static int loopback_socket(int type, struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, type, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)) ||
	    getsockname(fd, (struct sockaddr *)addr, &len))
		return -1;
	return fd;
}

static unsigned long checksum(unsigned long sum, const unsigned char *p, size_t n)
{
	while (n--)
		sum = sum * 31 + *p++;
	return sum;
}

/* The sender's byte stream: a fixed LCG, so the receiver can recompute its checksum */
static unsigned long stream(unsigned char *buf, size_t n, unsigned int *x, unsigned long sum)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (*x = *x * 1103515245 + 12345) >> 16;
	return checksum(sum, buf, n);
}

static void tcp_send(const struct sockaddr_in *addr, long bytes)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned char buf[65536];
	unsigned int x = 1;

	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
		_exit(1);
	while (bytes > 0) {
		size_t n = bytes < (long)sizeof(buf) ? (size_t)bytes : sizeof(buf);

		stream(buf, n, &x, 0);
		if (write(fd, buf, n) != (ssize_t)n)
			_exit(1);
		bytes -= n;
	}
	_exit(close(fd) != 0);
}

static int tcp(long bytes)
{
	unsigned char buf[65536];
	unsigned long want = 0, got = 0;
	unsigned int x = 1;
	struct sockaddr_in addr;
	int lfd = loopback_socket(SOCK_STREAM, &addr), fd, status;
	long total = 0;
	ssize_t n;
	pid_t child;

	if (lfd < 0 || listen(lfd, 1))
		return 1;
	child = fork();
	if (child == 0)
		tcp_send(&addr, bytes);
	fd = accept(lfd, NULL, NULL);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
		got = checksum(got, buf, n);
		total += n;
	}
	waitpid(child, &status, 0);
	for (long left = bytes; left > 0; left -= sizeof(buf))
		want = stream(buf, left < (long)sizeof(buf) ? (size_t)left : sizeof(buf), &x, want);
	if (total != bytes || got != want || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("# received %ld of %ld bytes, checksum %lx, expected %lx\n", total, bytes,
		       got, want);
		return 1;
	}
	return 0;
}

static int udp(int count)
{
	struct sockaddr_in srv, me;
	int sfd = loopback_socket(SOCK_DGRAM, &srv);
	int fd = loopback_socket(SOCK_DGRAM, &me), status, echoed = 0;
	struct timeval tv = { 2, 0 };
	char msg[64], back[64];
	pid_t child;

	if (sfd < 0 || fd < 0)
		return 1;
	child = fork();
	if (child == 0) {	/* the echo server */
		for (int i = 0; i < count; i++) {
			struct sockaddr_in from;
			socklen_t len = sizeof(from);
			ssize_t n = recvfrom(sfd, back, sizeof(back), 0, (struct sockaddr *)&from, &len);

			if (n <= 0 || sendto(sfd, back, n, 0, (struct sockaddr *)&from, len) != n)
				_exit(1);
		}
		_exit(0);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < count; i++) {
		int len = snprintf(msg, sizeof(msg), "datagram %d", i);

		if (sendto(fd, msg, len, 0, (struct sockaddr *)&srv, sizeof(srv)) != len)
			break;
		if (recv(fd, back, sizeof(back), 0) == len && !memcmp(msg, back, len))
			echoed++;
	}
	waitpid(child, &status, 0);
	if (echoed != count)
		printf("# %d of %d datagrams came back\n", echoed, count);
	return echoed != count;
}

/* One request of 128 bytes, one reply of 1500: sizes of a small RPC */
#define RPC_REQUEST 128
#define RPC_REPLY 1500

static bool read_full(int fd, void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = read(fd, (char *)buf + done, n - done);

		if (r <= 0)
			return false;
		done += r;
	}
	return true;
}

static bool rpc_serve(int fd)
{
	char req[RPC_REQUEST], reply[RPC_REPLY];
	bool ok = read_full(fd, req, sizeof(req));

	memset(reply, req[0], sizeof(reply));
	ok = ok && write(fd, reply, sizeof(reply)) == (ssize_t)sizeof(reply);
	return close(fd) == 0 && ok;
}

/* One datagram call on the server's socket: its reply goes where the request came from */
static bool rpc_serve_datagram(int fd)
{
	char req[RPC_REQUEST], reply[RPC_REPLY];
	struct sockaddr_storage from;
	socklen_t len = sizeof(from);

	if (recvfrom(fd, req, sizeof(req), 0, (struct sockaddr *)&from, &len) != sizeof(req))
		return false;
	memset(reply, req[0], sizeof(reply));
	return sendto(fd, reply, sizeof(reply), 0, (struct sockaddr *)&from, len) ==
	       (ssize_t)sizeof(reply);
}

static bool rpc_call(int fd, int i)
{
	char req[RPC_REQUEST], reply[RPC_REPLY];
	bool ok;

	memset(req, 'a' + i % 26, sizeof(req));
	ok = write(fd, req, sizeof(req)) == (ssize_t)sizeof(req) &&
	     read_full(fd, reply, sizeof(reply)) && reply[RPC_REPLY - 1] == req[0];
	return close(fd) == 0 && ok;
}

/*
 * Wait for the child server; a client that stopped early (!COMPLETE) kills it first,
 * since it still waits for what was never sent.  True if it exited 0.
 */
static bool reap_server(pid_t child, bool complete)
{
	int status;

	if (!complete)
		kill(child, SIGKILL);
	return waitpid(child, &status, 0) == child && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* The loopback address of FAMILY, port 0 (any) */
static socklen_t loopback_addr(int family, struct sockaddr_storage *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->ss_family = family;
	if (family == AF_INET6) {
		((struct sockaddr_in6 *)addr)->sin6_addr = in6addr_loopback;
		return sizeof(struct sockaddr_in6);
	}
	((struct sockaddr_in *)addr)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(struct sockaddr_in);
}

/*
 * COUNT calls to a child server on the loopback of FAMILY: over TCP a connection per
 * call, which the server accepts, answers and closes; over UDP a datagram each way
 * between connected sockets
 */
static int rpc(int family, int type, int count)
{
	struct sockaddr_storage addr;
	socklen_t len = loopback_addr(family, &addr);
	int lfd = socket(family, type, 0), done = 0;
	bool served;
	struct timeval tv = { 2, 0 };
	pid_t child;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, len) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &len) ||
	    (type == SOCK_STREAM && listen(lfd, 16))) {
		printf("# loopback server socket: %s\n", strerror(errno));
		return 1;
	}
	child = fork();
	if (child == 0) {	/* the server */
		for (int i = 0; i < count; i++)
			if (type == SOCK_STREAM ? !rpc_serve(accept(lfd, NULL, NULL)) :
			    !rpc_serve_datagram(lfd))
				_exit(1);
		_exit(0);
	}
	for (int i = 0; i < count; i++) {
		int fd = socket(family, type, 0);

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr, len) || !rpc_call(fd, i))
			break;
		done++;
	}
	served = reap_server(child, done == count);
	close(lfd);
	if (done != count || !served) {
		printf("# %d of %d calls answered\n", done, count);
		return 1;
	}
	return 0;
}

/* 2 for an unknown KIND */
static int rpc_command(const char *kind, int count)
{
	if (!strcmp(kind, "tcp4"))
		return rpc(AF_INET, SOCK_STREAM, count);
	if (!strcmp(kind, "tcp6"))
		return rpc(AF_INET6, SOCK_STREAM, count);
	if (!strcmp(kind, "udp4"))
		return rpc(AF_INET, SOCK_DGRAM, count);
	return 2;
}

static int unix_socket(int type, struct sockaddr_un *addr, const char *path)
{
	int fd = socket(AF_UNIX, type, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	snprintf(addr->sun_path, sizeof(addr->sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)))
		return -1;
	return fd;
}

/* Round trips of a request and its reply; a child answers on its socket */
static int unix_round_trips(int type, int count)
{
	struct sockaddr_un srv, me;
	const char *kind = type == SOCK_STREAM ? "stream" : "datagram";
	int sfd = unix_socket(type, &srv, "/tmp/labtool.srv");
	int fd = type == SOCK_STREAM ? socket(AF_UNIX, type, 0) :
		 unix_socket(type, &me, "/tmp/labtool.cli");
	char msg[256], back[256];
	int answered = 0;
	pid_t child;

	if (sfd < 0 || fd < 0 || (type == SOCK_STREAM && listen(sfd, 1)))
		return 1;
	child = fork();
	if (child == 0) {	/* the echo server */
		int cfd = type == SOCK_STREAM ? accept(sfd, NULL, NULL) : sfd;

		for (int i = 0; i < count; i++) {
			struct sockaddr_un from;
			socklen_t len = sizeof(from);
			ssize_t n = recvfrom(cfd, back, sizeof(back), 0, (struct sockaddr *)&from, &len);

			if (n <= 0 || sendto(cfd, back, n, 0, type == SOCK_STREAM ? NULL :
					     (struct sockaddr *)&from, type == SOCK_STREAM ? 0 : len) != n)
				_exit(1);
		}
		_exit(0);
	}
	if (connect(fd, (struct sockaddr *)&srv, sizeof(srv)) == 0)
		for (int i = 0; i < count; i++) {
			memset(msg, i, sizeof(msg));
			if (write(fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg) ||
			    !read_full(fd, back, sizeof(back)) || memcmp(msg, back, sizeof(msg)))
				break;
			answered++;
		}
	reap_server(child, answered == count);
	close(fd);
	close(sfd);
	unlink("/tmp/labtool.srv");
	unlink("/tmp/labtool.cli");
	if (answered != count)
		printf("# %d of %d unix %s round trips completed\n", answered, count, kind);
	return answered != count;
}

static int unix_sockets(int count)
{
	return unix_round_trips(SOCK_STREAM, count) | unix_round_trips(SOCK_DGRAM, count);
}

static void profile_marker(bool start)
{
	if (start)
		asm volatile(".byte 0x0f, 0x1f, 0x80, 0x4b, 0x42, 0x53, 0x31");
	else
		asm volatile(".byte 0x0f, 0x1f, 0x80, 0x4b, 0x42, 0x53, 0x30");
}

/*
 * The notes are 4-byte aligned records: namesz, descsz, type, then the name and the
 * description, each padded to 4 bytes.  The build-id is type 3 (NT_GNU_BUILD_ID) of
 * owner "GNU".
 */
static int build_id(void)
{
	unsigned char buf[4096];
	size_t off = 0, len;
	FILE *f = fopen("/sys/kernel/notes", "rb");

	if (!f) {
		perror("/sys/kernel/notes");
		return 1;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 12 <= len) {
		unsigned int namesz, descsz, type;
		size_t name, desc;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name = off + 12;
		desc = name + ((namesz + 3) & ~3u);
		if (desc + descsz > len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name, "GNU", 4)) {
			for (size_t i = 0; i < descsz; i++)
				printf("%02x", buf[desc + i]);
			printf("\n");
			return 0;
		}
		off = desc + ((descsz + 3) & ~3u);
	}
	fprintf(stderr, "/sys/kernel/notes: no GNU build-id note\n");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "efault"))
		return efault();
	if (argc == 3 && !strcmp(argv[1], "mmap"))
		return map_compare(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "tcp"))
		return tcp(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "udp"))
		return udp(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "rpc")) {
		int ret = rpc_command(argv[2], atoi(argv[3]));

		if (ret != 2)	/* else an unknown kind */
			return ret;
	}
	if (argc == 3 && !strcmp(argv[1], "unix"))
		return unix_sockets(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "build-id"))
		return build_id();
	if (argc == 2 && !strncmp(argv[1], "profile-", 8)) {
		profile_marker(!strcmp(argv[1], "profile-start"));
		return 0;
	}
	fprintf(stderr, "usage: labtool efault | mmap FILE | tcp BYTES | udp COUNT |"
		" rpc tcp4|tcp6|udp4 COUNT | unix COUNT | profile-start | profile-stop | build-id\n");
	return 2;
}
