/* test_record_stream.c - the Valgrind engine's converter takes the tool's record stream as
   untrusted input: a stand-in `valgrind` first on PATH writes a given stream to the
   descriptor frames record names, and a malformed stream gives one clear error and a
   failed status, never a crash or a trace. The streams are the fuzz target's seeds
   (tests/fuzz/seeds/fuzz_vgrec/: two option bytes, then the pipe's bytes), among them
   the two reported inputs (a POST with 255-byte registers, a HELLO naming its own
   process as parent). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frames.h"
#include "testutil.h"

#if defined(__linux__) && defined(__x86_64__)

#define dir tu_workdir
#define at tu_workdir_path

static const char stand_in[] =
    "#!/bin/sh\n"
    "for a; do case $a in --frames-fd=*) fd=${a#--frames-fd=};; esac; done\n"
    "eval \"tail -c +3 \\\"$STREAM\\\" >&$fd\"\n";

/* frames record of /bin/true with the stand-in giving seed `name`; the exit status,
   stderr in *err. */
static int record_stream(const char *name, char **err) {
    int st;
    free(tu_run(&st, "PATH=%s:$PATH FRAMES_VG_LIB=%s/lib STREAM=%s/tests/fuzz/seeds/fuzz_vgrec/%s LC_ALL=C "
                     "%s record -f --engine valgrind -o %s/t.frames -- /bin/true >/dev/null 2>%s/err.txt",
                dir, dir, tu_root(), name, tu_frames_bin(), dir, dir));
    *err = (char *)tu_read_file(at("err.txt"), NULL);
    return st;
}

static void rejected(const char *name, const char *why) {
    char *err;
    int st = record_stream(name, &err);
    if (!strstr(err, why)) fprintf(stderr, "%s: %s\n", name, err);
    assert_true(st != 0 && st < 128); /* an error, not a crash */
    assert_non_null(strstr(err, "frames record: malformed record from the valgrind tool: "));
    assert_non_null(strstr(err, why));
    free(err);
}

static void test_good_stream(void **state) {
    frames_reader *r;
    frames_frame f;
    frames_error e;
    size_t std = 0, sys = 0, mods = 0;
    char *err;
    (void)state;
    assert_int_equal(record_stream("stream", &err), 0);
    free(err);
    assert_int_equal(frames_reader_open_path(&r, at("t.frames"), NULL, &e), 0);
    while (frames_reader_next(r, &f) > 0) {
        assert_int_equal(frames_validate_frame(&f, &e), 0);
        std += f.kind == FRAMES_KIND_STD;
        sys += f.kind == FRAMES_KIND_SYSCALL;
        mods += f.kind == FRAMES_KIND_MODLOAD;
    }
    frames_reader_close(r);
    assert_int_equal(std, 6); /* the seed's instructions: 5 of thread 100, 1 of thread 101 */
    assert_int_equal(sys, 1);
    assert_int_equal(mods, 1);
}

static void test_post_register_sizes(void **state) {
    (void)state;
    rejected("post_register_sizes", "a register of a wrong number or size");
}

static void test_hello_own_parent(void **state) {
    (void)state;
    rejected("hello_own_parent", "a process naming itself as its parent");
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-recstream")) return -1;
    if (tu_write_file(at("valgrind"), stand_in, strlen(stand_in)) || chmod(at("valgrind"), 0755)) return -1;
    if (mkdir(at("lib"), 0755) || tu_write_file(at("lib/frames-amd64-linux"), "", 0) ||
        chmod(at("lib/frames-amd64-linux"), 0755))
        return -1;
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_stream),
        cmocka_unit_test(test_post_register_sizes),
        cmocka_unit_test(test_hello_own_parent),
    };
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}

#else
TU_SKIPPED_MAIN("test_record_stream", "frames record is not built (x86-64 Linux only)")
#endif
