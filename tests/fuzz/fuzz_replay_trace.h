/* fuzz_replay_trace.h - the small x86-64 trace the replay targets (fuzz_gdb, fuzz_fridx)
   work on, written once to a temporary file. Include after fuzz_util.h. */
#ifndef FRAMES_FUZZ_REPLAY_TRACE_H
#define FRAMES_FUZZ_REPLAY_TRACE_H

/* The trace: n instructions of a loop at 0x401000.. in threads 1 and 2 (12 of every 16
   in thread 1), each reading RAX and writing RAX, odd ones storing 8 bytes at
   0x403000 + 8 * (i % 4). */
static void fz_write_trace(const char *path, int n) {
    frames_writer *w;
    frames_writer_options o;
    frames_error err;
    int i;
    frames_writer_options_default(&o);
    o.machine = FRAMES_MACH_X86_64;
    FZ_CHECK(frames_writer_open_path(&w, path, &o, NULL, &err) == 0);
    for (i = 0; i < n; i++) {
        frames_frame f;
        frames_operand pre[1], post[2];
        uint64_t before = (uint64_t)i * 3, after = before + 1;
        static const uint8_t code[3] = {0x48, 0x89, 0xc0};
        memset(&f, 0, sizeof f);
        memset(pre, 0, sizeof pre);
        memset(post, 0, sizeof post);
        pre[0].spec = post[0].spec = FRAMES_REG;
        pre[0].name = post[0].name = frames_str("RAX");
        pre[0].bit_length = post[0].bit_length = 64;
        pre[0].read = 1;
        pre[0].value = frames_bytes_of(&before, 8);
        post[0].written = 1;
        post[0].value = frames_bytes_of(&after, 8);
        post[1].spec = FRAMES_MEM;
        post[1].address = 0x403000 + 8 * (uint64_t)(i % 4);
        post[1].bit_length = 64;
        post[1].written = 1;
        post[1].value = frames_bytes_of(&after, 8);
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x401000 + 3 * (uint64_t)(i % 8);
        f.std.thread_id = i % 16 < 12 ? 1 : 2;
        f.std.rawbytes = frames_bytes_of(code, 3);
        f.std.pre = pre;
        f.std.npre = 1;
        f.std.post = post;
        f.std.npost = i % 2 ? 2 : 1;
        f.std.has_post = 1;
        FZ_CHECK(frames_writer_add(w, &f) == 0);
    }
    FZ_CHECK(frames_writer_close(w) == 0);
}

#endif
