/* frames cat: decode every frame into the model and encode it again with the writer
   (a frame that decodes without any FRAMES_FF_* flag would encode to its own bytes: it is
   copied as read, and most frames are known to be such without decoding them).
   The output is byte-identical to the input for traces the upstream writer finished, and
   an unfinished input comes out as the trace upstream would have written had it finished. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char cat_usage[] =
    "usage: frames cat IN OUT [-f] [--version N] [--toc libtrace|ceil|tracewrap|ceil-zero]\n"
    "                         [--frames-per-toc M] [--zstd[=LEVEL]]\n"
    "\n"
    "Decode every frame of IN (a file, or - for standard input) and write it again to OUT\n"
    "(- for standard output, which cannot be finished: the trace is left unfinished, and\n"
    "every reader in the spec reads it). The meta frame is decoded and encoded too.\n"
    "By default OUT keeps IN's version (1 becomes 3), arch, machine, frames per TOC entry\n"
    "and TOC convention (libtrace when IN has none). IN may be compressed (.frames.zst);\n"
    "OUT is compressed when its name ends in .zst or with --zstd[=LEVEL].\n"
    "OUT must not be IN (use 'frames fix' to rewrite a trace in place); an existing OUT is\n"
    "replaced only with -f (--force), once the new trace is complete (docs/outputs.md).\n"
    "Exit status: 0 ok, 1 unreadable input, a frame that does not decode or a write\n"
    "error (OUT is then left as it was), 2 usage.\n";

/* Records copied as read go to the writer in runs: from a trace held in memory,
   consecutive records are one span that frames_writer_add_frames writes straight to the
   output (no copy into the writer's buffer), on the other CPU: a thread writes the runs
   while this one reads and checks the next (the kernel's copy into the page cache is
   half of cat's time). Runs of 1 MB, so that the output's writeback starts every few MB
   (cli_output_sink). The thread is the only one to use the writer while runs are queued:
   a frame encoded again waits until the queue is empty. */
#define CAT_RUN_BYTES ((size_t)1 << 20)
#define CAT_QUEUE 8
typedef struct cat_run {
    const uint8_t *start;
    size_t len;
    int in_memory;   /* frames_reader_in_memory: otherwise each record is copied alone */
    frames_writer *w;
    /* the writing thread (threaded 0: runs are written here) */
    int threaded, stop, rc;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    const uint8_t *queued[CAT_QUEUE];
    size_t queued_len[CAT_QUEUE];
    unsigned head, tail;   /* runs queued: tail - head */
} cat_run;

static void *write_runs(void *arg) {
    cat_run *run = (cat_run *)arg;
    pthread_mutex_lock(&run->lock);
    for (;;) {
        const uint8_t *start;
        size_t len;
        int rc;
        while (run->head == run->tail && !run->stop) pthread_cond_wait(&run->changed, &run->lock);
        if (run->head == run->tail) break;
        start = run->queued[run->head % CAT_QUEUE];
        len = run->queued_len[run->head % CAT_QUEUE];
        pthread_mutex_unlock(&run->lock);
        rc = run->rc < 0 ? run->rc : frames_writer_add_frames(run->w, start, len);
        pthread_mutex_lock(&run->lock);
        run->rc = rc;
        run->head++;
        pthread_cond_broadcast(&run->changed);
    }
    pthread_mutex_unlock(&run->lock);
    return NULL;
}

static void start_runs(cat_run *run, frames_writer *w, int in_memory) {
    memset(run, 0, sizeof *run);
    run->w = w;
    run->in_memory = in_memory;
    if (!in_memory) return;
    pthread_mutex_init(&run->lock, NULL);
    pthread_cond_init(&run->changed, NULL);
    run->threaded = pthread_create(&run->thread, NULL, write_runs, run) == 0;
    if (!run->threaded) {
        pthread_cond_destroy(&run->changed);
        pthread_mutex_destroy(&run->lock);
    }
}

/* Until every queued run is written: the writer's result. */
static int wait_runs(cat_run *run) {
    int rc;
    if (!run->threaded) return FRAMES_OK;
    pthread_mutex_lock(&run->lock);
    while (run->head != run->tail) pthread_cond_wait(&run->changed, &run->lock);
    rc = run->rc;
    pthread_mutex_unlock(&run->lock);
    return rc;
}

static void stop_runs(cat_run *run) {
    if (!run->threaded) return;
    pthread_mutex_lock(&run->lock);
    run->stop = 1;
    pthread_cond_broadcast(&run->changed);
    pthread_mutex_unlock(&run->lock);
    pthread_join(run->thread, NULL);
    pthread_cond_destroy(&run->changed);
    pthread_mutex_destroy(&run->lock);
    run->threaded = 0;
}

/* Hand the current run to the writing thread (or write it). */
static int flush_run(cat_run *run) {
    int rc = FRAMES_OK;
    if (!run->len) return FRAMES_OK;
    if (!run->threaded) {
        rc = frames_writer_add_frames(run->w, run->start, run->len);
    } else {
        pthread_mutex_lock(&run->lock);
        while (run->tail - run->head == CAT_QUEUE) pthread_cond_wait(&run->changed, &run->lock);
        if ((rc = run->rc) >= 0) {
            run->queued[run->tail % CAT_QUEUE] = run->start;
            run->queued_len[run->tail % CAT_QUEUE] = run->len;
            run->tail++;
            pthread_cond_broadcast(&run->changed);
        }
        pthread_mutex_unlock(&run->lock);
    }
    run->len = 0;
    return rc;
}

static int copy_record(cat_run *run, const frames_raw *raw) {
    const uint8_t *record = (const uint8_t *)raw->payload.ptr - 8;
    int rc;
    if (!run->in_memory) return frames_writer_add_encoded(run->w, raw->payload.ptr, raw->payload.len);
    if (run->len && (record != run->start + run->len || run->len >= CAT_RUN_BYTES) &&
        (rc = flush_run(run)) < 0)
        return rc;
    if (!run->len) run->start = record;
    run->len += 8 + raw->payload.len;
    return FRAMES_OK;
}

/* A frame the decoder would see nothing odd in (no flag) encodes again to exactly its
   bytes (test_fastpath checks that on every near miss of the canonical layout): those
   are copied as read, which saves encoding them again; most are known to be such by a
   check of their bytes (frames_reader_raw_is_canonical), the others are decoded, and
   the flagged ones are encoded from the model. */
static int copy_frame(frames_reader *r, cat_run *run, const frames_raw *raw,
                      uint64_t *piqirun_rejects) {
    frames_frame f;
    int rc;
    if (frames_reader_raw_is_canonical(r, raw)) return copy_record(run, raw);
    if ((rc = frames_reader_decode(r, raw, &f)) < 0) return rc;
    if (f.flags & FRAMES_FF_PIQIRUN_REJECTS) ++*piqirun_rejects;
    if (!f.flags) return copy_record(run, raw);
    if ((rc = flush_run(run)) < 0 || (rc = wait_runs(run)) < 0) return rc;
    return frames_writer_add(run->w, &f);
}

static int copy_frames(frames_reader *r, frames_writer *w, uint64_t *piqirun_rejects) {
    frames_raw raw;
    cli_progress pg;   /* on a terminal's stderr only */
    cat_run run;
    int rc, written;
    start_runs(&run, w, frames_reader_in_memory(r));
    cli_progress_start(&pg, "cat", cli_known_frames(r));
    while ((rc = frames_reader_next_raw(r, &raw)) > 0) {
        if ((rc = copy_frame(r, &run, &raw, piqirun_rejects)) < 0) break;
        cli_progress_update(&pg, frames_reader_tell(r));
    }
    /* the frames before a frame that does not decode are written too, as they were when
       each went to the writer alone (standard output keeps them) */
    if ((written = flush_run(&run)) >= 0) written = wait_runs(&run);
    stop_runs(&run);
    if (rc == 0) rc = written;
    cli_progress_end(&pg);
    if (rc < 0 && frames_writer_error(w)->code) return cli_lib_error(frames_writer_error(w));
    if (rc < 0) {
        cli_lib_error(frames_reader_error(r));
        return cli_fail(CLI_DATA, "stopped at frame %llu: no output written ('frames fix' keeps "
                        "the frames before it)",
                        (unsigned long long)frames_reader_tell(r) - 1);
    }
    return CLI_OK;
}

/* Back to an empty output, to write the copy again. */
static int rewind_output(cli_output *out) {
    if (ftruncate(out->fd, 0) == 0 && lseek(out->fd, 0, SEEK_SET) == 0) return CLI_OK;
    return cli_fail(CLI_DATA, "%s: cannot write the copy again: %s", out->path, strerror(errno));
}

/* The copy, with the settings like (and those of the command line). *w: the writer, to be
   closed (NULL when it could not be opened). */
static int copy(frames_reader *r, cli_output *out, const frames_writer_options *like,
                const frames_writer_options *cmdline, unsigned given, frames_writer **w,
                uint64_t *rejects) {
    frames_writer_options o = *like;
    o.meta_raw = frames_bytes_of(NULL, 0); /* re-encode the meta from the model */
    o.encode_flags = FRAMES_ENC_LENIENT;   /* reproduce what was read, even odd frames */
    cli_apply_writer_options(&o, cmdline, given);
    *rejects = 0;
    if (!(*w = cli_output_writer(out, &o, frames_reader_meta(r)))) return CLI_DATA;
    return copy_frames(r, *w, rejects);
}

/* *rp: the reader of IN, which may be replaced by a new one. */
static int cat(frames_reader **rp, const char *in, cli_output *out,
               const frames_writer_options *cmdline, unsigned given) {
    frames_writer_options like;
    frames_writer *w;
    uint64_t rejects;
    int status, rc;
    /* the input's TOC entries are checked by the copy's own reading when the copy can be
       made again (a named input, a temporary output): the rare input whose check fails is
       copied again from a new reader, exactly as without the shortcut (settings from a
       scan of the trace before reading it) */
    if (out->tmp && strcmp(in, "-") != 0) frames_writer_options_like_copy(*rp, &like);
    else frames_writer_options_like(*rp, &like);
    status = copy(*rp, out, &like, cmdline, given, &w, &rejects);
    if (status == CLI_OK && !frames_writer_options_like_confirm(*rp, &like)) {
        frames_writer_abandon(w);
        w = NULL;
        frames_reader_close(*rp);
        *rp = NULL;
        if ((status = rewind_output(out)) != CLI_OK) return status;
        if (!(*rp = cli_open_reader(in, NULL))) return CLI_DATA;
        frames_writer_options_like(*rp, &like);
        status = copy(*rp, out, &like, cmdline, given, &w, &rejects);
    }
    /* a copy that failed leaves the warnings the scan before it would have given */
    if (status != CLI_OK && *rp) frames_writer_options_like(*rp, &like);
    if (!w) return status;
    rc = frames_writer_close(w);
    if (rc == FRAMES_UNFINISHED)
        cli_warn("%s cannot seek: the trace was left unfinished (no TOC, n = 0, T = 0)", out->path);
    else if (rc < 0 && status == CLI_OK)
        status = cli_fail(CLI_DATA, "%s: cannot finish the trace", out->path);
    if (rejects)
        cli_warn("%llu frames are written as read, but BAP's reader (piqirun) rejects them",
                 (unsigned long long)rejects);
    return status;
}

int cmd_cat(int argc, char **argv) {
    frames_writer_options cmdline;
    const char *paths[2] = {NULL, NULL};
    unsigned given = 0;
    frames_reader *r;
    cli_output out;
    int i, npaths = 0, status;
    if (cli_wants_help(argc, argv)) {
        fputs(cat_usage, stdout);
        return CLI_OK;
    }
    frames_writer_options_default(&cmdline);
    for (i = 1; i < argc; i++) {
        int used = cli_writer_option(argc, argv, &i, &cmdline, &given);
        if (used == CLI_USAGE) return CLI_USAGE;
        if (used || cli_force_option(argv[i])) continue;
        if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("unknown option '%s'", argv[i]);
        if (npaths == 2) return cli_usage_error("too many arguments");
        paths[npaths++] = argv[i];
    }
    if (npaths != 2) return cli_usage_error("need IN and OUT");
    if ((status = cli_output_open(&out, paths[1], paths, 1)) != CLI_OK) return status;
    if (!(r = cli_open_reader(paths[0], NULL))) {
        cli_output_abort(&out);
        return CLI_DATA;
    }
    status = cat(&r, paths[0], &out, &cmdline, given);
    if (status == CLI_OK) status = cli_output_commit(&out);
    else cli_output_abort(&out);
    if (r) {
        cli_reader_warnings(r);
        frames_reader_close(r);
    }
    return status;
}
