/* frames_sancov.h - input boundaries for the frames_sancov.c tracer (see docs/sancov.md).

   Only needed by harnesses that run several inputs in one process without going through
   LLVMFuzzerTestOneInput (e.g. AFL++'s __AFL_LOOP persistent mode). The declarations are
   weak, so a harness that calls them through the FRAMES_SANCOV_* macros also links and
   runs without the tracer. */
#ifndef FRAMES_SANCOV_H_INCLUDED
#define FRAMES_SANCOV_H_INCLUDED

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Start the trace of one input (finishing a trace that is still open). data/size are
   recorded in a taint_intro frame (up to FRAMES_SANCOV_INPUT_BYTES); data may be NULL. */
void frames_sancov_begin_input(const void *data, size_t size) __attribute__((weak));
/* Finish the trace of the current input. */
void frames_sancov_end_input(void) __attribute__((weak));

#define FRAMES_SANCOV_BEGIN(data, size) \
    do { if (frames_sancov_begin_input) frames_sancov_begin_input((data), (size)); } while (0)
#define FRAMES_SANCOV_END() \
    do { if (frames_sancov_end_input) frames_sancov_end_input(); } while (0)

#ifdef __cplusplus
}
#endif
#endif
