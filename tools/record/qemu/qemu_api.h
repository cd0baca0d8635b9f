/* qemu_api.h - the part of QEMU's TCG plugin API (docs/devel/tcg-plugins in QEMU's
   manual: "QEMU TCG Plugins", the API reference) that frames_qemu.c uses, declared here
   from that documentation because no Debian package ships QEMU's plugin header. Only
   what is documented as stable between QEMU 7.2 (plugin API version 1) and QEMU 9+
   (version 2 and later) is declared as a link-time symbol; the newer register and
   memory-value functions are looked up with dlsym when the plugin loads (frames_qemu.c).
   Types with documented layouts (qemu_info_t, the register descriptor) follow the
   documentation; opaque handles stay opaque. */
#ifndef FRAMES_QEMU_API_H
#define FRAMES_QEMU_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_register;
typedef uint32_t qemu_plugin_meminfo_t;

/* What QEMU tells the plugin at install. */
typedef struct qemu_info_t {
    const char *target_name;   /* "aarch64", "arm", "riscv64", ... */
    struct {
        int min, cur;          /* plugin API versions this QEMU accepts */
    } version;
    bool system_emulation;
    /* then a union of system-emulation details, unused here (C99 has no anonymous
       unions; QEMU allocates the struct, the plugin only reads the members above) */
} qemu_info_t;

/* Whether a callback reads or writes the CPU registers (QEMU then keeps them in sync). */
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W = 2, QEMU_PLUGIN_MEM_RW = 3 };

typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num,
                                              uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                                              uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8);
typedef void (*qemu_plugin_vcpu_syscall_ret_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_idx, int64_t num,
                                                  int64_t ret);

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                      void *userdata);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_vcpu_syscall_ret_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_ret_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn); /* removed in QEMU 9.1 */
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

/* The program and its code range (user mode): QEMU 10 no longer exports these, so they
   are looked up with dlsym (frames_qemu.c, first_module). */
typedef const char *(*qemu_plugin_path_to_binary_fn)(void);
typedef uint64_t (*qemu_plugin_code_bound_fn)(void);

/* QEMU >= 9 (found by dlsym): a register as qemu_plugin_get_registers lists it (a GArray
   of these, from a vCPU callback), and its value appended to a GByteArray. */
typedef struct qemu_plugin_reg_descriptor {
    struct qemu_plugin_register *handle;
    const char *name;
    const char *feature;
} qemu_plugin_reg_descriptor;

/* QEMU >= 9.2 (found by dlsym): the value of a memory access, from a memory callback
   (qemu_plugin_mem_get_value), as a number of the access's size. */
enum qemu_plugin_mem_value_type {
    QEMU_PLUGIN_MEM_VALUE_U8,
    QEMU_PLUGIN_MEM_VALUE_U16,
    QEMU_PLUGIN_MEM_VALUE_U32,
    QEMU_PLUGIN_MEM_VALUE_U64,
    QEMU_PLUGIN_MEM_VALUE_U128
};
typedef struct qemu_plugin_mem_value {
    enum qemu_plugin_mem_value_type type;
    union {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        struct {
            uint64_t low, high;
        } u128;
    } data;
} qemu_plugin_mem_value;

/* glib's public array layouts (GArray, GByteArray): data pointer, then length. */
typedef struct frames_garray {
    char *data;
    unsigned int len;
} frames_garray;
typedef struct frames_gbytes {
    uint8_t *data;
    unsigned int len;
} frames_gbytes;

#endif
