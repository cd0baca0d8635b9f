/* test_docs: every complete C program in README.md and the docs directory (a ```c block with a
   main function) compiles warning-free as C99 against the headers and runs with exit
   status 0, given a reference trace as its argument. Documentation that does not build is
   a defect like any other. */
#include "frames.h"

#include <dirent.h>

#include "testutil.h"

static int run_examples_of(const char *md_path) {
    size_t n;
    char *text = (char *)tu_read_file(md_path, &n), *p;
    int examples = 0;
    if (!text) return 0;
    for (p = text; (p = strstr(p, "```c\n")) != NULL;) {
        char *body = p + 5, *end = strstr(body, "```");
        const char *src = tu_tmp_path(".c"), *bin = tu_tmp_path("");
        char *out;
        int st;
        if (!end) break;
        p = end + 3;
        if (!strstr(body, "int main(") || strstr(body, "int main(") > end) continue;
        assert_int_equal(tu_write_file(src, body, (size_t)(end - body)), 0);
        out = tu_run(&st, "cc -std=c99 -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Werror -I'%s' '%s' -o '%s' 2>&1",
                     tu_root(), src, bin);
        if (st) fprintf(stderr, "example %d of %s does not compile:\n%s\n", examples + 1, md_path, out);
        assert_int_equal(st, 0);
        free(out);
        out = tu_run(&st, "'%s' '%s'", bin, tu_shared("vectors/frames/r11_pintraces_like_x86.frames"));
        if (st) fprintf(stderr, "example %d of %s exits with %d\n", examples + 1, md_path, st);
        assert_int_equal(st, 0);
        free(out);
        unlink(src);
        unlink(bin);
        examples++;
    }
    free(text);
    return examples;
}

static void test_examples_build_and_run(void **state) {
    DIR *d = opendir(tu_src("docs"));
    struct dirent *e;
    int total = run_examples_of(tu_src("README.md"));
    (void)state;
    assert_true(total >= 1);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[300];
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
        snprintf(path, sizeof path, "%s/%.200s", tu_src("docs"), e->d_name);
        total += run_examples_of(path);
    }
    closedir(d);
    assert_true(total >= 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples_build_and_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
