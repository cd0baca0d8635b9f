/* frames gdbserver - serve a trace to gdb (GDB remote serial protocol) on standard
   input/output or one loopback TCP connection. The protocol is frames_gdb.h, the state
   frames_replay.h; this file only moves bytes. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "frames_gdb.h"

static const char usage_text[] =
    "usage: frames gdbserver [--index PATH] [--listen 127.0.0.1:PORT] TRACE\n"
    "\n"
    "Serve TRACE to gdb over the GDB remote serial protocol: forwards and backwards\n"
    "(stepi, reverse-stepi, continue, reverse-continue), breakpoints, watchpoints and\n"
    "threads, answered from the trace's state index (built beside the trace when missing\n"
    "or stale). In gdb:\n"
    "\n"
    "    (gdb) target remote | frames gdbserver TRACE\n"
    "    (gdb) monitor when          the index of the next instruction to execute\n"
    "    (gdb) monitor goto I        move to before instruction I (then: flushregs)\n"
    "\n"
    "  --index PATH             the state index (default TRACE.fridx)\n"
    "  --listen 127.0.0.1:PORT  serve one client on a loopback TCP port instead of standard\n"
    "                           input/output (PORT 0: any free port); the address in use is\n"
    "                           printed on standard error. Only loopback addresses are\n"
    "                           accepted: the protocol has no authentication.\n"
    "\n"
    "Exit status: 0 when the client detached, killed or closed the connection; 1 for a\n"
    "trace or connection error; 2 for a usage error. See docs/timetravel.md.\n";

static int write_all(void *ctx, const void *data, size_t n) {
    int fd = *(int *)ctx;
    const char *p = (const char *)data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Serve the client on in/out until it detaches or closes: an exit code. */
static int serve(frames_replay *r, int in, int out) {
    frames_gdb *g;
    frames_gdb_options o;
    frames_error err;
    char buf[4096];
    int rc = FRAMES_OK;
    frames_gdb_options_default(&o);
    o.write = write_all;
    o.write_ctx = &out;
    if (frames_gdb_open(&g, r, &o, &err) < 0) return cli_lib_error(&err);
    while (rc == FRAMES_OK) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        rc = frames_gdb_feed(g, buf, (size_t)n);
    }
    if (rc < 0) rc = cli_lib_error(frames_gdb_error(g));
    else rc = CLI_OK;
    frames_gdb_close(g);
    return rc;
}

/* "HOST:PORT" with a loopback IPv4 HOST (or localhost) into *sa; 0 or an exit code. */
static int parse_listen(const char *arg, struct sockaddr_in *sa) {
    char host[64];
    const char *colon = strrchr(arg, ':');
    uint64_t port;
    if (!colon || (size_t)(colon - arg) >= sizeof host || cli_parse_u64(colon + 1, &port) ||
        port > 65535)
        return cli_usage_error("--listen needs HOST:PORT, e.g. 127.0.0.1:1234 (got '%s')", arg);
    memcpy(host, arg, (size_t)(colon - arg));
    host[colon - arg] = 0;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (!strcmp(host, "localhost")) strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return cli_usage_error("--listen: '%s' is not an IPv4 address", host);
    if ((ntohl(sa->sin_addr.s_addr) >> 24) != 127)
        return cli_usage_error("--listen: %s is not a loopback address (the protocol has no "
                               "authentication; use 127.0.0.1 and an SSH tunnel)", host);
    return 0;
}

/* Accept one client on the address and serve it. */
static int serve_tcp(frames_replay *r, const struct sockaddr_in *sa) {
    struct sockaddr_in bound;
    socklen_t len = sizeof bound;
    int one = 1, fd, client, rc;
    char text[INET_ADDRSTRLEN];
    if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
        return cli_fail(CLI_DATA, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) < 0 || listen(fd, 1) < 0 ||
        getsockname(fd, (struct sockaddr *)&bound, &len) < 0) {
        rc = cli_fail(CLI_DATA, "cannot listen on port %u: %s", (unsigned)ntohs(sa->sin_port),
                      strerror(errno));
        close(fd);
        return rc;
    }
    inet_ntop(AF_INET, &bound.sin_addr, text, sizeof text);
    fprintf(stderr, "frames gdbserver: listening on %s:%u\n", text, (unsigned)ntohs(bound.sin_port));
    fflush(stderr);
    do client = accept(fd, NULL, NULL);
    while (client < 0 && errno == EINTR);
    close(fd);
    if (client < 0) return cli_fail(CLI_DATA, "accept: %s", strerror(errno));
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rc = serve(r, client, client);
    close(client);
    return rc;
}

/* Open the trace with its index; when the index must be built first, say so: gdb gives
   up waiting for a reply after remotetimeout (2 s) and the build takes longer on a large
   trace. */
static int open_replay(frames_replay **r, const char *trace, frames_replay_options *ro,
                       frames_error *err) {
    int rc;
    ro->build_index = 0;
    rc = frames_replay_open(r, trace, ro, err);
    if (rc != FRAMES_E_REPLAY_INDEX) return rc;
    cli_warn("building the state index of %s first (about 1 s per GB of trace; if gdb times "
             "out, build it with 'frames gdbserver %s </dev/null' and connect again)", trace, trace);
    ro->build_index = 1;
    return frames_replay_open(r, trace, ro, err);
}

int cmd_gdbserver(int argc, char **argv) {
    const char *trace = NULL, *listen_at = NULL;
    frames_replay_options ro;
    frames_replay *r;
    frames_error err;
    struct sockaddr_in sa;
    int i, rc;
    if (cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return CLI_OK;
    }
    frames_replay_options_default(&ro);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--index") || !strcmp(a, "--listen")) {
            if (i + 1 >= argc) return cli_usage_error("%s needs a value", a);
            if (!strcmp(a, "--index")) ro.index_path = argv[++i];
            else listen_at = argv[++i];
        } else if (!strncmp(a, "--index=", 8)) {
            ro.index_path = a + 8;
        } else if (!strncmp(a, "--listen=", 9)) {
            listen_at = a + 9;
        } else if ((rc = cli_trace_arg(a, &trace)) != CLI_OK) {
            return rc;
        }
    }
    if (!trace) return cli_usage_error("no trace given");
    if (!strcmp(trace, "-")) return cli_usage_error("the trace must be a file (it is read at random)");
    if (listen_at && (rc = parse_listen(listen_at, &sa)) != 0) return rc;
    signal(SIGPIPE, SIG_IGN);   /* a client that goes away is a write error, not a signal */
    if (open_replay(&r, trace, &ro, &err) < 0) return cli_lib_error(&err);
    rc = listen_at ? serve_tcp(r, &sa) : serve(r, 0, 1);
    frames_replay_close(r);
    return rc;
}
