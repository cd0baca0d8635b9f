/* pbbuild.h - a tiny protobuf wire builder for tests, written independently of frames.h's
   encoder so that tests can make exact (also malformed) inputs byte by byte.
   Messages nest by building the inner one in its own pb_buf and appending it with
   pb_msg. Header-only, static functions. */
#ifndef FRAMES_PBBUILD_H
#define FRAMES_PBBUILD_H

#include "testutil.h"   /* TU_FN */

#include <stdint.h>
#include <string.h>

typedef struct pb_buf {
    uint8_t b[1 << 16];
    size_t n;
} pb_buf;

TU_FN void pb_reset(pb_buf *p) { p->n = 0; }

TU_FN void pb_raw(pb_buf *p, const void *data, size_t len) {
    memcpy(p->b + p->n, data, len);
    p->n += len;
}

TU_FN void pb_byte(pb_buf *p, uint8_t v) { p->b[p->n++] = v; }

TU_FN void pb_varint(pb_buf *p, uint64_t v) {
    while (v >= 0x80) {
        pb_byte(p, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    pb_byte(p, (uint8_t)v);
}

TU_FN void pb_tag(pb_buf *p, uint32_t field, uint32_t wire) { pb_varint(p, (uint64_t)field << 3 | wire); }

TU_FN void pb_u64(pb_buf *p, uint32_t field, uint64_t v) {
    pb_tag(p, field, 0);
    pb_varint(p, v);
}

TU_FN uint64_t pb_zz(int64_t v) { return ((uint64_t)v << 1) ^ (v < 0 ? ~(uint64_t)0 : 0); }

TU_FN void pb_sint(pb_buf *p, uint32_t field, int64_t v) { pb_u64(p, field, pb_zz(v)); }

TU_FN void pb_bytes(pb_buf *p, uint32_t field, const void *data, size_t len) {
    pb_tag(p, field, 2);
    pb_varint(p, len);
    pb_raw(p, data, len);
}

TU_FN void pb_str(pb_buf *p, uint32_t field, const char *s) { pb_bytes(p, field, s, strlen(s)); }

TU_FN void pb_msg(pb_buf *p, uint32_t field, const pb_buf *inner) { pb_bytes(p, field, inner->b, inner->n); }

TU_FN void pb_fixed64(pb_buf *p, uint32_t field, uint64_t v) {
    int i;
    pb_tag(p, field, 1);
    for (i = 0; i < 8; i++) pb_byte(p, (uint8_t)(v >> (8 * i)));
}

TU_FN void pb_fixed32(pb_buf *p, uint32_t field, uint32_t v) {
    int i;
    pb_tag(p, field, 5);
    for (i = 0; i < 4; i++) pb_byte(p, (uint8_t)(v >> (8 * i)));
}

/* Little-endian uint64 container word. */
TU_FN void pb_le64(pb_buf *p, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) pb_byte(p, (uint8_t)(v >> (8 * i)));
}

/* An operand_info for a register: name, bit_length as the raw varint bits_wire (its
   zigzag form; a test may give more than 32 bits), usage (read and written as given,
   also values other than 0 and 1), no_taint, value. */
TU_FN void pb_reg_operand_wire(pb_buf *out, const char *name, uint64_t bits_wire, int read,
                                int written, const void *value, size_t vlen) {
    pb_buf reg, spec, usage, taint, op;
    pb_reset(&reg);
    pb_reset(&spec);
    pb_reset(&usage);
    pb_reset(&taint);
    pb_reset(&op);
    pb_str(&reg, 1, name);
    pb_msg(&spec, 2, &reg);
    pb_u64(&usage, 1, (uint64_t)read);
    pb_u64(&usage, 2, (uint64_t)written);
    pb_u64(&usage, 3, 0);
    pb_u64(&usage, 4, 0);
    pb_u64(&taint, 1, 1);
    pb_msg(&op, 1, &spec);
    pb_u64(&op, 2, bits_wire);
    pb_msg(&op, 3, &usage);
    pb_msg(&op, 4, &taint);
    pb_bytes(&op, 5, value, vlen);
    pb_msg(out, 1, &op);
}

/* An operand_info for a register: name, bit_length, usage, no_taint, value. */
TU_FN void pb_reg_operand(pb_buf *out, const char *name, int32_t bits, int read, int written,
                           const void *value, size_t vlen) {
    pb_reg_operand_wire(out, name, pb_zz(bits), read, written, value, vlen);
}

#endif
