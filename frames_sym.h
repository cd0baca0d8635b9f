/* frames_sym.h - names instead of bare addresses: pcs as module+offset, symbol+offset
   (ELF .symtab/.dynsym), file:line (DWARF, through elfutils' libdw when available), and
   syscall numbers as names for x86-64, i386, arm and aarch64.
   Single-header C99 library (also compiles as C++) on top of frames.h. MIT licence, see
   the end of the file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   A symboliser for the pcs of a trace. The modules come from the trace's modload frames
   (or from the caller: frames_sym_add_module). For a pc inside a module it gives
     - always: the module and the offset of the pc from the module's low address;
     - when the module's file is on disk (under an optional sysroot) and matches the
       mapping: the nearest preceding function symbol of the same section (.symtab, else
       the .symtab of its separate debug file /usr/lib/debug/.build-id/xx/yyyy.debug,
       else .dynsym) and the offset from it, as `addr2line -f` and `nm` name it;
     - with libdw (FRAMES_SYM_LIBDW): the source file and line of the pc, as addr2line.
   A file matches a mapping when the mapping is exactly one of its PT_LOAD segments (page
   rounded, as the kernel maps it, or exact, as perf and PIN write it) or its whole image,
   at a load bias an ET_EXEC file allows (zero), and when the trace says more (a build id
   given with the module, the meta frame's target size) that agrees too. A file that does
   not match, cannot be read or is damaged gives a warning and module+offset names, never a
   wrong name. ELF and DWARF files are untrusted input: every offset, size and count read
   from them is checked against the file before use; only the C library is needed (mmap
   on POSIX systems). Files are read lazily, once, when a pc first falls into them.
   A frames_sym is not thread-safe (lookups fill a cache): one per thread, or a lock.

   Syscall names come from tables written from the kernel's syscall lists
   (arch/x86/entry/syscalls/syscall_{64,32}.tbl, arch/arm/tools/syscall.tbl,
   include/uapi/asm-generic/unistd.h with arm64's options), up to number 461.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in another file):

       #define FRAMES_SYM_IMPLEMENTATION
       #include "frames_sym.h"

   Symbolising the pcs of a trace:

       frames_sym *s; frames_error err; frames_frame f; frames_sym_loc loc; char name[512];
       if (frames_sym_open(&s, NULL, &err) < 0) { fprintf(stderr, "%s\n", err.message); return 1; }
       while (frames_reader_next(r, &f) > 0) {
           frames_sym_add_frame(s, &f);             // modload frames define modules
           if (f.kind == FRAMES_KIND_STD && frames_sym_lookup(s, f.std.address, &loc) > 0) {
               frames_sym_format(&loc, FRAMES_SYM_FMT_LINE, name, sizeof name);
               printf("%llx %s\n", (unsigned long long)f.std.address, name);
           }
       }
       frames_sym_close(s);

   Syscall names: frames_sym_syscall_name(frames_sym_abi(h->arch, h->machine), 257)
   is "openat" for a trace of an x86-64 program.

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_SYM_STATIC   this header's functions static (and frames.h's too when it is
                       first included through this header)
   FRAMES_SYM_LIBDW      use elfutils' libdw for file:line (link with -ldw -lelf)
   frames.h's options hold here too (FRAMES_STATIC, FRAMES_DEF, FRAMES_MALLOC & co,
   FRAMES_NO_POSIX: files are read with stdio, FRAMES_NO_TEXT: no JSON printer), except
   FRAMES_NO_STDIO: this header reads files.

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

   Syscall names       frames_sym_abi, frames_sym_syscall_name / _known, frames_sym_abi_name
   Symboliser          frames_sym_options_default, frames_sym_open / _close,
                       frames_sym_add_module / _add_frame / _add_reader / _set_meta,
                       frames_sym_lookup, frames_sym_lookup_data, frames_sym_format,
                       frames_sym_print_json,
                       frames_sym_info_get, frames_sym_warning
   ELF reader          frames_sym_elf_open / _close / _symbols / _find / _data /
                       _find_data / _build_id (one file's function and data symbols; fuzzed)

   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Syscall names
   Symboliser
   ELF reader (exposed for tools and the fuzz target)
   IMPLEMENTATION
     syscall tables
     ELF reader
     files: mapped (or read) once, parsed once, shared by every module naming them
     the module table
     lookup and formatting
*/
#ifndef FRAMES_SYM_H_INCLUDED
#define FRAMES_SYM_H_INCLUDED

#if defined(FRAMES_SYM_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_NO_STDIO)
#error "frames_sym.h reads files and formats names with stdio: not with FRAMES_NO_STDIO"
#endif

#if defined(FRAMES_SYM_STATIC) && !defined(FRAMES_SYM_DEF)   /* even after a shared frames.h */
#define FRAMES_SYM_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_SYM_DEF)
#define FRAMES_SYM_DEF FRAMES_DEF
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Syscall names
   ====================================================================================== */

typedef enum frames_sym_abi_id {
    FRAMES_SYM_ABI_UNKNOWN = 0,
    FRAMES_SYM_ABI_X86_64 = 1,
    FRAMES_SYM_ABI_I386 = 2,
    FRAMES_SYM_ABI_ARM = 3,      /* EABI */
    FRAMES_SYM_ABI_AARCH64 = 4
} frames_sym_abi_id;

/* The syscall ABI of a trace from its header's arch and machine (x86-64 as
   frames_arch_is_x86_64 decides, any other i386 machine i386; arm; aarch64). */
FRAMES_SYM_DEF int frames_sym_abi(uint64_t arch, uint64_t machine);
/* "x86-64", "i386", "arm", "aarch64" or "unknown". */
FRAMES_SYM_DEF const char *frames_sym_abi_name(int abi);
/* The name of syscall `number` of `abi` ("openat"), or "unknown" for a number the table
   does not name (frames_sym_syscall_known tells the two apart). */
FRAMES_SYM_DEF const char *frames_sym_syscall_name(int abi, uint64_t number);
FRAMES_SYM_DEF int frames_sym_syscall_known(int abi, uint64_t number);

/* ======================================================================================
   Symboliser
   ====================================================================================== */

#define FRAMES_SYM_NO_FILES 1u   /* read no file: module+offset names only */
#define FRAMES_SYM_NO_LINES 2u   /* no DWARF file:line even when libdw is built in */

typedef struct frames_sym_options {
    const char *sysroot;       /* prefix of absolute module paths (NULL: none); copied */
    uint32_t flags;            /* FRAMES_SYM_* */
    uint64_t max_file_size;    /* larger files are not read (default 4 GiB) */
    void *alloc_ctx;           /* passed to FRAMES_MALLOC & co */
} frames_sym_options;

FRAMES_SYM_DEF void frames_sym_options_default(frames_sym_options *o);

typedef struct frames_sym frames_sym;

FRAMES_SYM_DEF int frames_sym_open(frames_sym **s, const frames_sym_options *o, frames_error *err);
FRAMES_SYM_DEF void frames_sym_close(frames_sym *s);

/* A module: `name` (a path, or a label such as "[vdso]") mapped at [low, high], high
   inclusive as in modload frames; build_id (may be NULL/0) is checked against the file's
   GNU build id. A later module overlapping an earlier one wins where they overlap.
   Returns FRAMES_OK or FRAMES_E_NOMEM / FRAMES_E_INVALID (low > high). */
FRAMES_SYM_DEF int frames_sym_add_module(frames_sym *s, const char *name, size_t name_len,
                                     uint64_t low, uint64_t high, const void *build_id,
                                     size_t build_id_len);
/* Adds the module of a modload frame; other frames are ignored (returns FRAMES_OK). */
FRAMES_SYM_DEF int frames_sym_add_frame(frames_sym *s, const frames_frame *f);
/* Adds the modules of every modload frame from r's current position to its end (only
   modload frames are decoded; r is left at the end). Undecodable frames are skipped. */
FRAMES_SYM_DEF int frames_sym_add_reader(frames_sym *s, frames_reader *r);
/* The trace's meta frame: the file of the module named as its target_path must have
   the size recorded there (fstats_size, when not zero). m may be NULL. */
FRAMES_SYM_DEF void frames_sym_set_meta(frames_sym *s, const frames_meta *m);

#define FRAMES_SYM_FOUND_MODULE 1u   /* module, module_offset */
#define FRAMES_SYM_FOUND_SYMBOL 2u   /* symbol, symbol_offset, file_address */
#define FRAMES_SYM_FOUND_LINE 4u     /* file, line */
#define FRAMES_SYM_FOUND_ADDRESS 8u  /* file_address (the file matched the mapping) */

/* Where a pc is. Strings are not NUL-terminated views (use the lengths) and stay valid
   until frames_sym_close. */
typedef struct frames_sym_loc {
    uint32_t found;              /* FRAMES_SYM_FOUND_* bits */
    const char *module;          /* the module's name as the trace gives it */
    size_t module_len;
    size_t module_base;          /* start of its last path component in module */
    uint64_t module_offset;      /* pc - the module's low address */
    uint64_t file_address;       /* the pc as an address of the ELF file (link-time
                                    address: what addr2line, nm and objdump take) */
    const char *symbol;
    size_t symbol_len;
    uint64_t symbol_offset;      /* file_address - the symbol's value */
    uint64_t symbol_size;        /* frames_sym_lookup_data: the data object's size */
    const char *file;            /* source file (DWARF) */
    size_t file_len;
    uint32_t line;
} frames_sym_loc;

/* Look pc up. Returns the FRAMES_SYM_FOUND_* bits (0: in no module) or a negative code
   (FRAMES_E_NOMEM). Problems with files become warnings, not errors. Repeated pcs are
   answered from a cache; one lookup costs a few binary searches otherwise. */
FRAMES_SYM_DEF int frames_sym_lookup(frames_sym *s, uint64_t pc, frames_sym_loc *loc);

/* The data object (a global or static: frames_sym_elf_find_data) that holds address
   addr: FRAMES_SYM_FOUND_SYMBOL with symbol, symbol_offset (addr's offset in it) and the
   module. The module holding addr is asked first, then every module with a matching
   file (a trace may name only the mapping of a file's code). Returns the found bits
   (0: no data object) or FRAMES_E_NOMEM. Not cached: one lookup costs a binary search
   per module. */
FRAMES_SYM_DEF int frames_sym_lookup_data(frames_sym *s, uint64_t addr, frames_sym_loc *loc);

#define FRAMES_SYM_FMT_LINE 1u       /* append " at FILE:LINE" when known */
#define FRAMES_SYM_FMT_FULL_PATH 2u  /* the module's whole name, not its last component */
/* "libc.so.6!memcpy+0x12" (symbol), "libc.so.6+0x2a1c0" (module only), "" (none), with
   FRAMES_SYM_FMT_LINE " at /src/x.c:12" after it. Writes at most cap bytes including a
   NUL; returns the length the whole text needs (as snprintf). */
FRAMES_SYM_DEF size_t frames_sym_format(const frames_sym_loc *loc, unsigned flags, char *buf,
                                    size_t cap);

#ifndef FRAMES_NO_TEXT
/* The location as JSON members to append to an object: `,"module":"/lib/x.so",
   "module_offset":N` then, when known, `,"file_address":N`, `,"symbol":"f",
   "symbol_offset":N`, `,"file":"/src/x.c","line":N`. Nothing when found is 0.
   Returns 0 or FRAMES_E_IO when out() stopped. */
FRAMES_SYM_DEF int frames_sym_print_json(const frames_sym_loc *loc, frames_out_fn out, void *ctx);
#endif

typedef struct frames_sym_info {
    uint64_t modules;          /* modules added */
    uint64_t files;            /* distinct files looked for */
    uint64_t files_loaded;     /* of which read and usable */
    uint64_t symbols;          /* function symbols of the loaded files */
    uint64_t lookups, cache_hits;
    uint32_t nwarnings;        /* frames_sym_warning(s, i) for i < min(nwarnings, 64) */
    int have_dw;               /* built with libdw */
} frames_sym_info;

FRAMES_SYM_DEF void frames_sym_info_get(const frames_sym *s, frames_sym_info *info);
/* Warning i ("/lib/x.so: does not match the mapping 0x...-0x... (no PT_LOAD segment of
   that size): module+offset names only"), or "" past the last kept one. */
FRAMES_SYM_DEF const char *frames_sym_warning(const frames_sym *s, uint32_t i);

/* ======================================================================================
   ELF reader (exposed for tools and the fuzz target)
   ====================================================================================== */

/* One code symbol of an ELF file. */
typedef struct frames_sym_elf_symbol {
    uint64_t value;            /* st_value */
    uint64_t size;             /* st_size */
    const char *name;          /* view into the file data */
    size_t name_len;
    uint32_t section;          /* st_shndx */
} frames_sym_elf_symbol;

typedef struct frames_sym_elf frames_sym_elf;

/* Parse an ELF image in memory (data must outlive the object). A damaged image gives
   FRAMES_E_FORMAT with a message; an image without symbols is not an error. */
FRAMES_SYM_DEF int frames_sym_elf_open(frames_sym_elf **e, const void *data, size_t size,
                                   void *alloc_ctx, frames_error *err);
FRAMES_SYM_DEF void frames_sym_elf_close(frames_sym_elf *e);
/* Code symbols (STT_FUNC, STT_GNU_IFUNC, and STT_NOTYPE labels such as _start, as BFD
   takes them; no ARM mapping symbols) sorted by value, one per value (a typed one before
   a label, then the global, else weak, else local one that comes first), and where they
   came from: ".symtab", ".dynsym" or "". */
FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_symbols(const frames_sym_elf *e,
                                                               size_t *n, const char **table);
/* The symbol naming file address `addr` (nearest preceding one of the same section),
   or NULL. */
FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_find(const frames_sym_elf *e,
                                                            uint64_t addr);
/* Data objects (STT_OBJECT symbols with a size, of the same table: .symtab, else
   .dynsym) sorted by value, one per value, as `nm -S` lists them (types B b D d R r). */
FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_data(const frames_sym_elf *e, size_t *n);
/* The data object that holds file address `addr` (value <= addr < value + size), or NULL. */
FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_find_data(const frames_sym_elf *e,
                                                                 uint64_t addr);
/* GNU build id (NULL when the file has none). */
FRAMES_SYM_DEF const uint8_t *frames_sym_elf_build_id(const frames_sym_elf *e, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_SYM_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_SYM_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_SYM_IMPLEMENTATION_INCLUDED
#define FRAMES_SYM_IMPLEMENTATION_INCLUDED

#define FRAMES__WANT_HELPERS
#include "frames.h"

#include <errno.h>
#include <stdio.h>
#ifndef FRAMES_NO_POSIX
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#ifdef FRAMES_SYM_LIBDW
#include <elfutils/libdw.h>
#include <libelf.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   syscall tables
   -------------------------------------------------------------------------------------- */

static const char *const frames__sym_sc_x86_64[462] = {
    /*   0 */ "read", "write", "open", "close", "stat", "fstat", "lstat", "poll", "lseek",
    /*   9 */ "mmap", "mprotect", "munmap", "brk", "rt_sigaction", "rt_sigprocmask",
    /*  15 */ "rt_sigreturn", "ioctl", "pread64", "pwrite64", "readv", "writev", "access",
    /*  22 */ "pipe", "select", "sched_yield", "mremap", "msync", "mincore", "madvise",
    /*  29 */ "shmget", "shmat", "shmctl", "dup", "dup2", "pause", "nanosleep", "getitimer",
    /*  37 */ "alarm", "setitimer", "getpid", "sendfile", "socket", "connect", "accept",
    /*  44 */ "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown", "bind", "listen",
    /*  51 */ "getsockname", "getpeername", "socketpair", "setsockopt", "getsockopt", "clone",
    /*  57 */ "fork", "vfork", "execve", "exit", "wait4", "kill", "uname", "semget", "semop",
    /*  66 */ "semctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "fcntl", "flock",
    /*  74 */ "fsync", "fdatasync", "truncate", "ftruncate", "getdents", "getcwd", "chdir",
    /*  81 */ "fchdir", "rename", "mkdir", "rmdir", "creat", "link", "unlink", "symlink",
    /*  89 */ "readlink", "chmod", "fchmod", "chown", "fchown", "lchown", "umask",
    /*  96 */ "gettimeofday", "getrlimit", "getrusage", "sysinfo", "times", "ptrace", "getuid",
    /* 103 */ "syslog", "getgid", "setuid", "setgid", "geteuid", "getegid", "setpgid",
    /* 110 */ "getppid", "getpgrp", "setsid", "setreuid", "setregid", "getgroups", "setgroups",
    /* 117 */ "setresuid", "getresuid", "setresgid", "getresgid", "getpgid", "setfsuid",
    /* 123 */ "setfsgid", "getsid", "capget", "capset", "rt_sigpending", "rt_sigtimedwait",
    /* 129 */ "rt_sigqueueinfo", "rt_sigsuspend", "sigaltstack", "utime", "mknod", "uselib",
    /* 135 */ "personality", "ustat", "statfs", "fstatfs", "sysfs", "getpriority",
    /* 141 */ "setpriority", "sched_setparam", "sched_getparam", "sched_setscheduler",
    /* 145 */ "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
    /* 148 */ "sched_rr_get_interval", "mlock", "munlock", "mlockall", "munlockall", "vhangup",
    /* 154 */ "modify_ldt", "pivot_root", "_sysctl", "prctl", "arch_prctl", "adjtimex",
    /* 160 */ "setrlimit", "chroot", "sync", "acct", "settimeofday", "mount", "umount2",
    /* 167 */ "swapon", "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm",
    /* 174 */ "create_module", "init_module", "delete_module", "get_kernel_syms",
    /* 178 */ "query_module", "quotactl", "nfsservctl", "getpmsg", "putpmsg", "afs_syscall",
    /* 184 */ "tuxcall", "security", "gettid", "readahead", "setxattr", "lsetxattr",
    /* 190 */ "fsetxattr", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr",
    /* 196 */ "flistxattr", "removexattr", "lremovexattr", "fremovexattr", "tkill", "time",
    /* 202 */ "futex", "sched_setaffinity", "sched_getaffinity", "set_thread_area", "io_setup",
    /* 207 */ "io_destroy", "io_getevents", "io_submit", "io_cancel", "get_thread_area",
    /* 212 */ "lookup_dcookie", "epoll_create", "epoll_ctl_old", "epoll_wait_old",
    /* 216 */ "remap_file_pages", "getdents64", "set_tid_address", "restart_syscall",
    /* 220 */ "semtimedop", "fadvise64", "timer_create", "timer_settime", "timer_gettime",
    /* 225 */ "timer_getoverrun", "timer_delete", "clock_settime", "clock_gettime",
    /* 229 */ "clock_getres", "clock_nanosleep", "exit_group", "epoll_wait", "epoll_ctl",
    /* 234 */ "tgkill", "utimes", "vserver", "mbind", "set_mempolicy", "get_mempolicy",
    /* 240 */ "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    /* 245 */ "mq_getsetattr", "kexec_load", "waitid", "add_key", "request_key", "keyctl",
    /* 251 */ "ioprio_set", "ioprio_get", "inotify_init", "inotify_add_watch",
    /* 255 */ "inotify_rm_watch", "migrate_pages", "openat", "mkdirat", "mknodat", "fchownat",
    /* 261 */ "futimesat", "newfstatat", "unlinkat", "renameat", "linkat", "symlinkat",
    /* 267 */ "readlinkat", "fchmodat", "faccessat", "pselect6", "ppoll", "unshare",
    /* 273 */ "set_robust_list", "get_robust_list", "splice", "tee", "sync_file_range",
    /* 278 */ "vmsplice", "move_pages", "utimensat", "epoll_pwait", "signalfd",
    /* 283 */ "timerfd_create", "eventfd", "fallocate", "timerfd_settime", "timerfd_gettime",
    /* 288 */ "accept4", "signalfd4", "eventfd2", "epoll_create1", "dup3", "pipe2",
    /* 294 */ "inotify_init1", "preadv", "pwritev", "rt_tgsigqueueinfo", "perf_event_open",
    /* 299 */ "recvmmsg", "fanotify_init", "fanotify_mark", "prlimit64", "name_to_handle_at",
    /* 304 */ "open_by_handle_at", "clock_adjtime", "syncfs", "sendmmsg", "setns", "getcpu",
    /* 310 */ "process_vm_readv", "process_vm_writev", "kcmp", "finit_module", "sched_setattr",
    /* 315 */ "sched_getattr", "renameat2", "seccomp", "getrandom", "memfd_create",
    /* 320 */ "kexec_file_load", "bpf", "execveat", "userfaultfd", "membarrier", "mlock2",
    /* 326 */ "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc",
    /* 331 */ "pkey_free", "statx", "io_pgetevents", "rseq", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 347 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 374 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 401 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 424 */ "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* 428 */ "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    /* 434 */ "pidfd_open", "clone3", "close_range", "openat2", "pidfd_getfd", "faccessat2",
    /* 440 */ "process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd",
    /* 444 */ "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    /* 447 */ "memfd_secret", "process_mrelease", "futex_waitv", "set_mempolicy_home_node",
    /* 451 */ "cachestat", "fchmodat2", "map_shadow_stack", "futex_wake", "futex_wait",
    /* 456 */ "futex_requeue", "statmount", "listmount", "lsm_get_self_attr",
    /* 460 */ "lsm_set_self_attr", "lsm_list_modules"
};

static const char *const frames__sym_sc_i386[462] = {
    /*   0 */ "restart_syscall", "exit", "fork", "read", "write", "open", "close", "waitpid",
    /*   8 */ "creat", "link", "unlink", "execve", "chdir", "time", "mknod", "chmod", "lchown",
    /*  17 */ "break", "oldstat", "lseek", "getpid", "mount", "umount", "setuid", "getuid",
    /*  25 */ "stime", "ptrace", "alarm", "oldfstat", "pause", "utime", "stty", "gtty",
    /*  33 */ "access", "nice", "ftime", "sync", "kill", "rename", "mkdir", "rmdir", "dup",
    /*  42 */ "pipe", "times", "prof", "brk", "setgid", "getgid", "signal", "geteuid",
    /*  50 */ "getegid", "acct", "umount2", "lock", "ioctl", "fcntl", "mpx", "setpgid",
    /*  58 */ "ulimit", "oldolduname", "umask", "chroot", "ustat", "dup2", "getppid", "getpgrp",
    /*  66 */ "setsid", "sigaction", "sgetmask", "ssetmask", "setreuid", "setregid",
    /*  72 */ "sigsuspend", "sigpending", "sethostname", "setrlimit", "getrlimit", "getrusage",
    /*  78 */ "gettimeofday", "settimeofday", "getgroups", "setgroups", "select", "symlink",
    /*  84 */ "oldlstat", "readlink", "uselib", "swapon", "reboot", "readdir", "mmap", "munmap",
    /*  92 */ "truncate", "ftruncate", "fchmod", "fchown", "getpriority", "setpriority",
    /*  98 */ "profil", "statfs", "fstatfs", "ioperm", "socketcall", "syslog", "setitimer",
    /* 105 */ "getitimer", "stat", "lstat", "fstat", "olduname", "iopl", "vhangup", "idle",
    /* 113 */ "vm86old", "wait4", "swapoff", "sysinfo", "ipc", "fsync", "sigreturn", "clone",
    /* 121 */ "setdomainname", "uname", "modify_ldt", "adjtimex", "mprotect", "sigprocmask",
    /* 127 */ "create_module", "init_module", "delete_module", "get_kernel_syms", "quotactl",
    /* 132 */ "getpgid", "fchdir", "bdflush", "sysfs", "personality", "afs_syscall", "setfsuid",
    /* 139 */ "setfsgid", "_llseek", "getdents", "_newselect", "flock", "msync", "readv",
    /* 146 */ "writev", "getsid", "fdatasync", "_sysctl", "mlock", "munlock", "mlockall",
    /* 153 */ "munlockall", "sched_setparam", "sched_getparam", "sched_setscheduler",
    /* 157 */ "sched_getscheduler", "sched_yield", "sched_get_priority_max",
    /* 160 */ "sched_get_priority_min", "sched_rr_get_interval", "nanosleep", "mremap",
    /* 164 */ "setresuid", "getresuid", "vm86", "query_module", "poll", "nfsservctl",
    /* 170 */ "setresgid", "getresgid", "prctl", "rt_sigreturn", "rt_sigaction",
    /* 175 */ "rt_sigprocmask", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo",
    /* 179 */ "rt_sigsuspend", "pread64", "pwrite64", "chown", "getcwd", "capget", "capset",
    /* 186 */ "sigaltstack", "sendfile", "getpmsg", "putpmsg", "vfork", "ugetrlimit", "mmap2",
    /* 193 */ "truncate64", "ftruncate64", "stat64", "lstat64", "fstat64", "lchown32",
    /* 199 */ "getuid32", "getgid32", "geteuid32", "getegid32", "setreuid32", "setregid32",
    /* 205 */ "getgroups32", "setgroups32", "fchown32", "setresuid32", "getresuid32",
    /* 210 */ "setresgid32", "getresgid32", "chown32", "setuid32", "setgid32", "setfsuid32",
    /* 216 */ "setfsgid32", "pivot_root", "mincore", "madvise", "getdents64", "fcntl64", 0, 0,
    /* 224 */ "gettid", "readahead", "setxattr", "lsetxattr", "fsetxattr", "getxattr",
    /* 230 */ "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr",
    /* 236 */ "lremovexattr", "fremovexattr", "tkill", "sendfile64", "futex",
    /* 241 */ "sched_setaffinity", "sched_getaffinity", "set_thread_area", "get_thread_area",
    /* 245 */ "io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel", "fadvise64",
    /* 251 */ 0, "exit_group", "lookup_dcookie", "epoll_create", "epoll_ctl", "epoll_wait",
    /* 257 */ "remap_file_pages", "set_tid_address", "timer_create", "timer_settime",
    /* 261 */ "timer_gettime", "timer_getoverrun", "timer_delete", "clock_settime",
    /* 265 */ "clock_gettime", "clock_getres", "clock_nanosleep", "statfs64", "fstatfs64",
    /* 270 */ "tgkill", "utimes", "fadvise64_64", "vserver", "mbind", "get_mempolicy",
    /* 276 */ "set_mempolicy", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    /* 281 */ "mq_notify", "mq_getsetattr", "kexec_load", "waitid", 0, "add_key", "request_key",
    /* 288 */ "keyctl", "ioprio_set", "ioprio_get", "inotify_init", "inotify_add_watch",
    /* 293 */ "inotify_rm_watch", "migrate_pages", "openat", "mkdirat", "mknodat", "fchownat",
    /* 299 */ "futimesat", "fstatat64", "unlinkat", "renameat", "linkat", "symlinkat",
    /* 305 */ "readlinkat", "fchmodat", "faccessat", "pselect6", "ppoll", "unshare",
    /* 311 */ "set_robust_list", "get_robust_list", "splice", "sync_file_range", "tee",
    /* 316 */ "vmsplice", "move_pages", "getcpu", "epoll_pwait", "utimensat", "signalfd",
    /* 322 */ "timerfd_create", "eventfd", "fallocate", "timerfd_settime", "timerfd_gettime",
    /* 327 */ "signalfd4", "eventfd2", "epoll_create1", "dup3", "pipe2", "inotify_init1",
    /* 333 */ "preadv", "pwritev", "rt_tgsigqueueinfo", "perf_event_open", "recvmmsg",
    /* 338 */ "fanotify_init", "fanotify_mark", "prlimit64", "name_to_handle_at",
    /* 342 */ "open_by_handle_at", "clock_adjtime", "syncfs", "sendmmsg", "setns",
    /* 347 */ "process_vm_readv", "process_vm_writev", "kcmp", "finit_module", "sched_setattr",
    /* 352 */ "sched_getattr", "renameat2", "seccomp", "getrandom", "memfd_create", "bpf",
    /* 358 */ "execveat", "socket", "socketpair", "bind", "connect", "listen", "accept4",
    /* 365 */ "getsockopt", "setsockopt", "getsockname", "getpeername", "sendto", "sendmsg",
    /* 371 */ "recvfrom", "recvmsg", "shutdown", "userfaultfd", "membarrier", "mlock2",
    /* 377 */ "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc",
    /* 382 */ "pkey_free", "statx", "arch_prctl", "io_pgetevents", "rseq", 0, 0, 0, 0, 0, 0,
    /* 393 */ "semget", "semctl", "shmget", "shmctl", "shmat", "shmdt", "msgget", "msgsnd",
    /* 401 */ "msgrcv", "msgctl", "clock_gettime64", "clock_settime64", "clock_adjtime64",
    /* 406 */ "clock_getres_time64", "clock_nanosleep_time64", "timer_gettime64",
    /* 409 */ "timer_settime64", "timerfd_gettime64", "timerfd_settime64", "utimensat_time64",
    /* 413 */ "pselect6_time64", "ppoll_time64", 0, "io_pgetevents_time64", "recvmmsg_time64",
    /* 418 */ "mq_timedsend_time64", "mq_timedreceive_time64", "semtimedop_time64",
    /* 421 */ "rt_sigtimedwait_time64", "futex_time64", "sched_rr_get_interval_time64",
    /* 424 */ "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* 428 */ "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    /* 434 */ "pidfd_open", "clone3", "close_range", "openat2", "pidfd_getfd", "faccessat2",
    /* 440 */ "process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd",
    /* 444 */ "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    /* 447 */ "memfd_secret", "process_mrelease", "futex_waitv", "set_mempolicy_home_node",
    /* 451 */ "cachestat", "fchmodat2", 0, "futex_wake", "futex_wait", "futex_requeue",
    /* 457 */ "statmount", "listmount", "lsm_get_self_attr", "lsm_set_self_attr",
    /* 461 */ "lsm_list_modules"
};

static const char *const frames__sym_sc_arm[462] = {
    /*   0 */ "restart_syscall", "exit", "fork", "read", "write", "open", "close", 0, "creat",
    /*   9 */ "link", "unlink", "execve", "chdir", "time", "mknod", "chmod", "lchown", 0, 0,
    /*  19 */ "lseek", "getpid", "mount", "umount", "setuid", "getuid", "stime", "ptrace",
    /*  27 */ "alarm", 0, "pause", "utime", 0, 0, "access", "nice", 0, "sync", "kill", "rename",
    /*  39 */ "mkdir", "rmdir", "dup", "pipe", "times", 0, "brk", "setgid", "getgid", 0,
    /*  49 */ "geteuid", "getegid", "acct", "umount2", 0, "ioctl", "fcntl", 0, "setpgid", 0, 0,
    /*  60 */ "umask", "chroot", "ustat", "dup2", "getppid", "getpgrp", "setsid", "sigaction",
    /*  68 */ 0, 0, "setreuid", "setregid", "sigsuspend", "sigpending", "sethostname",
    /*  75 */ "setrlimit", "getrlimit", "getrusage", "gettimeofday", "settimeofday",
    /*  80 */ "getgroups", "setgroups", "select", "symlink", 0, "readlink", "uselib", "swapon",
    /*  88 */ "reboot", "readdir", "mmap", "munmap", "truncate", "ftruncate", "fchmod",
    /*  95 */ "fchown", "getpriority", "setpriority", 0, "statfs", "fstatfs", 0, "socketcall",
    /* 103 */ "syslog", "setitimer", "getitimer", "stat", "lstat", "fstat", 0, 0, "vhangup", 0,
    /* 113 */ "syscall", "wait4", "swapoff", "sysinfo", "ipc", "fsync", "sigreturn", "clone",
    /* 121 */ "setdomainname", "uname", 0, "adjtimex", "mprotect", "sigprocmask", 0,
    /* 128 */ "init_module", "delete_module", 0, "quotactl", "getpgid", "fchdir", "bdflush",
    /* 135 */ "sysfs", "personality", 0, "setfsuid", "setfsgid", "_llseek", "getdents",
    /* 142 */ "_newselect", "flock", "msync", "readv", "writev", "getsid", "fdatasync",
    /* 149 */ "_sysctl", "mlock", "munlock", "mlockall", "munlockall", "sched_setparam",
    /* 155 */ "sched_getparam", "sched_setscheduler", "sched_getscheduler", "sched_yield",
    /* 159 */ "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval",
    /* 162 */ "nanosleep", "mremap", "setresuid", "getresuid", 0, 0, "poll", "nfsservctl",
    /* 170 */ "setresgid", "getresgid", "prctl", "rt_sigreturn", "rt_sigaction",
    /* 175 */ "rt_sigprocmask", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo",
    /* 179 */ "rt_sigsuspend", "pread64", "pwrite64", "chown", "getcwd", "capget", "capset",
    /* 186 */ "sigaltstack", "sendfile", 0, 0, "vfork", "ugetrlimit", "mmap2", "truncate64",
    /* 194 */ "ftruncate64", "stat64", "lstat64", "fstat64", "lchown32", "getuid32", "getgid32",
    /* 201 */ "geteuid32", "getegid32", "setreuid32", "setregid32", "getgroups32",
    /* 206 */ "setgroups32", "fchown32", "setresuid32", "getresuid32", "setresgid32",
    /* 211 */ "getresgid32", "chown32", "setuid32", "setgid32", "setfsuid32", "setfsgid32",
    /* 217 */ "getdents64", "pivot_root", "mincore", "madvise", "fcntl64", 0, 0, "gettid",
    /* 225 */ "readahead", "setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr",
    /* 231 */ "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr",
    /* 236 */ "lremovexattr", "fremovexattr", "tkill", "sendfile64", "futex",
    /* 241 */ "sched_setaffinity", "sched_getaffinity", "io_setup", "io_destroy",
    /* 245 */ "io_getevents", "io_submit", "io_cancel", "exit_group", "lookup_dcookie",
    /* 250 */ "epoll_create", "epoll_ctl", "epoll_wait", "remap_file_pages", 0, 0,
    /* 256 */ "set_tid_address", "timer_create", "timer_settime", "timer_gettime",
    /* 260 */ "timer_getoverrun", "timer_delete", "clock_settime", "clock_gettime",
    /* 264 */ "clock_getres", "clock_nanosleep", "statfs64", "fstatfs64", "tgkill", "utimes",
    /* 270 */ "arm_fadvise64_64", "pciconfig_iobase", "pciconfig_read", "pciconfig_write",
    /* 274 */ "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    /* 279 */ "mq_getsetattr", "waitid", "socket", "bind", "connect", "listen", "accept",
    /* 286 */ "getsockname", "getpeername", "socketpair", "send", "sendto", "recv", "recvfrom",
    /* 293 */ "shutdown", "setsockopt", "getsockopt", "sendmsg", "recvmsg", "semop", "semget",
    /* 300 */ "semctl", "msgsnd", "msgrcv", "msgget", "msgctl", "shmat", "shmdt", "shmget",
    /* 308 */ "shmctl", "add_key", "request_key", "keyctl", "semtimedop", "vserver",
    /* 314 */ "ioprio_set", "ioprio_get", "inotify_init", "inotify_add_watch",
    /* 318 */ "inotify_rm_watch", "mbind", "get_mempolicy", "set_mempolicy", "openat",
    /* 323 */ "mkdirat", "mknodat", "fchownat", "futimesat", "fstatat64", "unlinkat",
    /* 329 */ "renameat", "linkat", "symlinkat", "readlinkat", "fchmodat", "faccessat",
    /* 335 */ "pselect6", "ppoll", "unshare", "set_robust_list", "get_robust_list", "splice",
    /* 341 */ "arm_sync_file_range", "tee", "vmsplice", "move_pages", "getcpu", "epoll_pwait",
    /* 347 */ "kexec_load", "utimensat", "signalfd", "timerfd_create", "eventfd", "fallocate",
    /* 353 */ "timerfd_settime", "timerfd_gettime", "signalfd4", "eventfd2", "epoll_create1",
    /* 358 */ "dup3", "pipe2", "inotify_init1", "preadv", "pwritev", "rt_tgsigqueueinfo",
    /* 364 */ "perf_event_open", "recvmmsg", "accept4", "fanotify_init", "fanotify_mark",
    /* 369 */ "prlimit64", "name_to_handle_at", "open_by_handle_at", "clock_adjtime", "syncfs",
    /* 374 */ "sendmmsg", "setns", "process_vm_readv", "process_vm_writev", "kcmp",
    /* 379 */ "finit_module", "sched_setattr", "sched_getattr", "renameat2", "seccomp",
    /* 384 */ "getrandom", "memfd_create", "bpf", "execveat", "userfaultfd", "membarrier",
    /* 390 */ "mlock2", "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc",
    /* 396 */ "pkey_free", "statx", "rseq", "io_pgetevents", "migrate_pages", "kexec_file_load",
    /* 402 */ 0, "clock_gettime64", "clock_settime64", "clock_adjtime64", "clock_getres_time64",
    /* 407 */ "clock_nanosleep_time64", "timer_gettime64", "timer_settime64",
    /* 410 */ "timerfd_gettime64", "timerfd_settime64", "utimensat_time64", "pselect6_time64",
    /* 414 */ "ppoll_time64", 0, "io_pgetevents_time64", "recvmmsg_time64",
    /* 418 */ "mq_timedsend_time64", "mq_timedreceive_time64", "semtimedop_time64",
    /* 421 */ "rt_sigtimedwait_time64", "futex_time64", "sched_rr_get_interval_time64",
    /* 424 */ "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* 428 */ "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    /* 434 */ "pidfd_open", "clone3", "close_range", "openat2", "pidfd_getfd", "faccessat2",
    /* 440 */ "process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd",
    /* 444 */ "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", 0,
    /* 448 */ "process_mrelease", "futex_waitv", "set_mempolicy_home_node", "cachestat",
    /* 452 */ "fchmodat2", "map_shadow_stack", "futex_wake", "futex_wait", "futex_requeue",
    /* 457 */ "statmount", "listmount", "lsm_get_self_attr", "lsm_set_self_attr",
    /* 461 */ "lsm_list_modules"
};

static const char *const frames__sym_sc_aarch64[462] = {
    /*   0 */ "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "setxattr",
    /*   6 */ "lsetxattr", "fsetxattr", "getxattr", "lgetxattr", "fgetxattr", "listxattr",
    /*  12 */ "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    /*  17 */ "getcwd", "lookup_dcookie", "eventfd2", "epoll_create1", "epoll_ctl",
    /*  22 */ "epoll_pwait", "dup", "dup3", "fcntl", "inotify_init1", "inotify_add_watch",
    /*  28 */ "inotify_rm_watch", "ioctl", "ioprio_set", "ioprio_get", "flock", "mknodat",
    /*  34 */ "mkdirat", "unlinkat", "symlinkat", "linkat", "renameat", "umount2", "mount",
    /*  41 */ "pivot_root", "nfsservctl", "statfs", "fstatfs", "truncate", "ftruncate",
    /*  47 */ "fallocate", "faccessat", "chdir", "fchdir", "chroot", "fchmod", "fchmodat",
    /*  54 */ "fchownat", "fchown", "openat", "close", "vhangup", "pipe2", "quotactl",
    /*  61 */ "getdents64", "lseek", "read", "write", "readv", "writev", "pread64", "pwrite64",
    /*  69 */ "preadv", "pwritev", "sendfile", "pselect6", "ppoll", "signalfd4", "vmsplice",
    /*  76 */ "splice", "tee", "readlinkat", "newfstatat", "fstat", "sync", "fsync",
    /*  83 */ "fdatasync", "sync_file_range", "timerfd_create", "timerfd_settime",
    /*  87 */ "timerfd_gettime", "utimensat", "acct", "capget", "capset", "personality", "exit",
    /*  94 */ "exit_group", "waitid", "set_tid_address", "unshare", "futex", "set_robust_list",
    /* 100 */ "get_robust_list", "nanosleep", "getitimer", "setitimer", "kexec_load",
    /* 105 */ "init_module", "delete_module", "timer_create", "timer_gettime",
    /* 109 */ "timer_getoverrun", "timer_settime", "timer_delete", "clock_settime",
    /* 113 */ "clock_gettime", "clock_getres", "clock_nanosleep", "syslog", "ptrace",
    /* 118 */ "sched_setparam", "sched_setscheduler", "sched_getscheduler", "sched_getparam",
    /* 122 */ "sched_setaffinity", "sched_getaffinity", "sched_yield", "sched_get_priority_max",
    /* 126 */ "sched_get_priority_min", "sched_rr_get_interval", "restart_syscall", "kill",
    /* 130 */ "tkill", "tgkill", "sigaltstack", "rt_sigsuspend", "rt_sigaction",
    /* 135 */ "rt_sigprocmask", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo",
    /* 139 */ "rt_sigreturn", "setpriority", "getpriority", "reboot", "setregid", "setgid",
    /* 145 */ "setreuid", "setuid", "setresuid", "getresuid", "setresgid", "getresgid",
    /* 151 */ "setfsuid", "setfsgid", "times", "setpgid", "getpgid", "getsid", "setsid",
    /* 158 */ "getgroups", "setgroups", "uname", "sethostname", "setdomainname", "getrlimit",
    /* 164 */ "setrlimit", "getrusage", "umask", "prctl", "getcpu", "gettimeofday",
    /* 170 */ "settimeofday", "adjtimex", "getpid", "getppid", "getuid", "geteuid", "getgid",
    /* 177 */ "getegid", "gettid", "sysinfo", "mq_open", "mq_unlink", "mq_timedsend",
    /* 183 */ "mq_timedreceive", "mq_notify", "mq_getsetattr", "msgget", "msgctl", "msgrcv",
    /* 189 */ "msgsnd", "semget", "semctl", "semtimedop", "semop", "shmget", "shmctl", "shmat",
    /* 197 */ "shmdt", "socket", "socketpair", "bind", "listen", "accept", "connect",
    /* 204 */ "getsockname", "getpeername", "sendto", "recvfrom", "setsockopt", "getsockopt",
    /* 210 */ "shutdown", "sendmsg", "recvmsg", "readahead", "brk", "munmap", "mremap",
    /* 217 */ "add_key", "request_key", "keyctl", "clone", "execve", "mmap", "fadvise64",
    /* 224 */ "swapon", "swapoff", "mprotect", "msync", "mlock", "munlock", "mlockall",
    /* 231 */ "munlockall", "mincore", "madvise", "remap_file_pages", "mbind", "get_mempolicy",
    /* 237 */ "set_mempolicy", "migrate_pages", "move_pages", "rt_tgsigqueueinfo",
    /* 241 */ "perf_event_open", "accept4", "recvmmsg", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 257 */ 0, 0, 0, "wait4", "prlimit64", "fanotify_init", "fanotify_mark",
    /* 264 */ "name_to_handle_at", "open_by_handle_at", "clock_adjtime", "syncfs", "setns",
    /* 269 */ "sendmmsg", "process_vm_readv", "process_vm_writev", "kcmp", "finit_module",
    /* 274 */ "sched_setattr", "sched_getattr", "renameat2", "seccomp", "getrandom",
    /* 279 */ "memfd_create", "bpf", "execveat", "userfaultfd", "membarrier", "mlock2",
    /* 285 */ "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc",
    /* 290 */ "pkey_free", "statx", "io_pgetevents", "rseq", "kexec_file_load", 0, 0, 0, 0, 0,
    /* 300 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 327 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 354 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 381 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 408 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "pidfd_send_signal",
    /* 425 */ "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree",
    /* 429 */ "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "pidfd_open", "clone3",
    /* 436 */ "close_range", "openat2", "pidfd_getfd", "faccessat2", "process_madvise",
    /* 441 */ "epoll_pwait2", "mount_setattr", "quotactl_fd", "landlock_create_ruleset",
    /* 445 */ "landlock_add_rule", "landlock_restrict_self", "memfd_secret", "process_mrelease",
    /* 449 */ "futex_waitv", "set_mempolicy_home_node", "cachestat", "fchmodat2",
    /* 453 */ "map_shadow_stack", "futex_wake", "futex_wait", "futex_requeue", "statmount",
    /* 458 */ "listmount", "lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules"
};

/* ARM's private syscalls (arch/arm/include/uapi/asm/unistd.h, EABI: base 0x0f0000). */
static const char *const frames__sym_sc_arm_private[7] = {
    0, "breakpoint", "cacheflush", "usr26", "usr32", "set_tls", "get_tls"};

FRAMES_SYM_DEF int frames_sym_abi(uint64_t arch, uint64_t machine) {
    switch (arch) {
    case FRAMES_ARCH_I386:
        return frames_arch_is_x86_64(arch, machine) ? FRAMES_SYM_ABI_X86_64 : FRAMES_SYM_ABI_I386;
    case FRAMES_ARCH_ARM: return FRAMES_SYM_ABI_ARM;
    case FRAMES_ARCH_AARCH64: return FRAMES_SYM_ABI_AARCH64;
    default: return FRAMES_SYM_ABI_UNKNOWN;
    }
}

FRAMES_SYM_DEF const char *frames_sym_abi_name(int abi) {
    switch (abi) {
    case FRAMES_SYM_ABI_X86_64: return "x86-64";
    case FRAMES_SYM_ABI_I386: return "i386";
    case FRAMES_SYM_ABI_ARM: return "arm";
    case FRAMES_SYM_ABI_AARCH64: return "aarch64";
    default: return "unknown";
    }
}

static const char *frames__sym_syscall(int abi, uint64_t nr) {
#define FRAMES__SYM_TABLE(t) (nr < sizeof t / sizeof t[0] ? t[nr] : 0)
    switch (abi) {
    case FRAMES_SYM_ABI_X86_64: return FRAMES__SYM_TABLE(frames__sym_sc_x86_64);
    case FRAMES_SYM_ABI_I386: return FRAMES__SYM_TABLE(frames__sym_sc_i386);
    case FRAMES_SYM_ABI_AARCH64: return FRAMES__SYM_TABLE(frames__sym_sc_aarch64);
    case FRAMES_SYM_ABI_ARM:
        if (nr >= 0x0f0000u && nr < 0x0f0007u) return frames__sym_sc_arm_private[nr - 0x0f0000u];
        return FRAMES__SYM_TABLE(frames__sym_sc_arm);
    default: return 0;
    }
#undef FRAMES__SYM_TABLE
}

FRAMES_SYM_DEF const char *frames_sym_syscall_name(int abi, uint64_t number) {
    const char *n = frames__sym_syscall(abi, number);
    return n ? n : "unknown";
}

FRAMES_SYM_DEF int frames_sym_syscall_known(int abi, uint64_t number) {
    return frames__sym_syscall(abi, number) != 0;
}

/* --------------------------------------------------------------------------------------
   ELF reader
   -------------------------------------------------------------------------------------- */

/* Every field is read through frames__sym_rd after a bounds check against the image;
   counts are bounded by the bytes that hold them. */

#define FRAMES__SYM_PT_NOTE 4u
#define FRAMES__SYM_PF_X 1u
#define FRAMES__SYM_SHT_SYMTAB 2u
#define FRAMES__SYM_SHT_STRTAB 3u
#define FRAMES__SYM_SHT_NOTE 7u
#define FRAMES__SYM_SHT_NOBITS 8u
#define FRAMES__SYM_SHT_DYNSYM 11u
#define FRAMES__SYM_SHF_ALLOC 2u
#define FRAMES__SYM_ET_EXEC 2u
#define FRAMES__SYM_EM_386 3u
#define FRAMES__SYM_EM_ARM 40u
#define FRAMES__SYM_EM_X86_64 62u

typedef frames__elf_seg frames__sym_seg;   /* frames.h's shared ELF program headers */

typedef struct frames__sym_sec {
    uint64_t addr, size, offset, entsize, flags;
    uint32_t type, link, name;
} frames__sym_sec;

struct frames_sym_elf {
    const uint8_t *d;
    size_t n;
    void *actx;
    int is64, be;
    uint32_t type, machine;
    frames__sym_seg *segs;
    uint32_t nsegs;
    frames__sym_sec *secs;
    uint32_t nsecs;
    frames_sym_elf_symbol *syms, *dsyms;   /* code symbols, data objects */
    size_t nsyms, ndsyms;
    const char *table;
    const uint8_t *build_id;
    size_t build_id_len;
    int has_debug_info;
};

static int frames__sym_in(const frames_sym_elf *e, uint64_t off, uint64_t len) {
    return off <= e->n && len <= e->n - off;
}

/* An unsigned field of `width` (1, 2, 4 or 8) bytes at `off` (the caller checked the
   bounds). */
static uint64_t frames__sym_rd(const frames_sym_elf *e, uint64_t off, unsigned width) {
    return frames__elf_rd(e->d + off, width, e->be);
}

/* Field of a 32- or 64-bit structure: (offset, width) for each class. */
#define FRAMES__SYM_F(e, base, o32, w32, o64, w64)                                           \
    ((e)->is64 ? frames__sym_rd(e, (base) + (o64), w64) : frames__sym_rd(e, (base) + (o32), w32))

static int frames__sym_read_segments(frames_sym_elf *e, frames_error *err) {
    uint64_t phoff;
    uint32_t entsize, num;
    int rc = frames__elf_phdr_table(e->d, &phoff, &num, &entsize, err);
    if (rc < 0 || num == 0) return rc;
    if (!frames__sym_in(e, phoff, (uint64_t)num * entsize))
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "program headers (%u of %u bytes at 0x%llx) "
                                "lie outside the file", num, entsize, (unsigned long long)phoff);
    return frames__elf_segments(e->d, e->d + phoff, num, entsize, e->actx, &e->segs, &e->nsegs, err);
}

static int frames__sym_read_sections(frames_sym_elf *e, frames_error *err) {
    uint64_t shoff = FRAMES__SYM_F(e, 0, 32, 4, 40, 8), num, i;
    uint32_t entsize = (uint32_t)FRAMES__SYM_F(e, 0, 46, 2, 58, 2);
    uint32_t need = e->is64 ? 64u : 40u;
    num = FRAMES__SYM_F(e, 0, 48, 2, 60, 2);
    if (shoff == 0) return FRAMES_OK;
    if (entsize < need || !frames__sym_in(e, shoff, entsize))
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "section headers at 0x%llx (entries of %u "
                                "bytes) lie outside the file", (unsigned long long)shoff, entsize);
    if (num == 0) num = FRAMES__SYM_F(e, shoff, 20, 4, 32, 8);   /* extended numbering */
    if (num > (e->n - shoff) / entsize)
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "%llu section headers at 0x%llx do not fit "
                                "in the file", (unsigned long long)num, (unsigned long long)shoff);
    if (num == 0) return FRAMES_OK;
    e->secs = (frames__sym_sec *)FRAMES_MALLOC((size_t)num * sizeof *e->secs, e->actx);
    if (!e->secs) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    for (i = 0; i < num; i++) {
        uint64_t b = shoff + i * entsize;
        frames__sym_sec *s = &e->secs[i];
        s->name = (uint32_t)frames__sym_rd(e, b, 4);
        s->type = (uint32_t)frames__sym_rd(e, b + 4, 4);
        s->flags = FRAMES__SYM_F(e, b, 8, 4, 8, 8);
        s->addr = FRAMES__SYM_F(e, b, 12, 4, 16, 8);
        s->offset = FRAMES__SYM_F(e, b, 16, 4, 24, 8);
        s->size = FRAMES__SYM_F(e, b, 20, 4, 32, 8);
        s->link = (uint32_t)FRAMES__SYM_F(e, b, 24, 4, 40, 4);
        s->entsize = FRAMES__SYM_F(e, b, 36, 4, 56, 8);
    }
    e->nsecs = (uint32_t)num;
    return FRAMES_OK;
}

/* The bytes of a section that has them in the file, or NULL. */
static const uint8_t *frames__sym_sec_data(const frames_sym_elf *e, const frames__sym_sec *s) {
    if (s->type == FRAMES__SYM_SHT_NOBITS || !frames__sym_in(e, s->offset, s->size)) return NULL;
    return e->d + s->offset;
}

/* Section names: only ".debug_info" (or its compressed form) matters here. */
static void frames__sym_read_section_names(frames_sym_elf *e) {
    uint64_t idx = FRAMES__SYM_F(e, 0, 50, 2, 62, 2), i;
    const frames__sym_sec *str;
    const uint8_t *names;
    if (idx == 0xffffu && e->nsecs) idx = e->secs[0].link;
    if (idx >= e->nsecs) return;
    str = &e->secs[idx];
    if (!(names = frames__sym_sec_data(e, str))) return;
    for (i = 0; i < e->nsecs; i++) {
        static const char want[] = ".debug_info", zwant[] = ".zdebug_info";
        uint64_t o = e->secs[i].name;
        if (o < str->size && str->size - o > sizeof want - 1 &&
            !memcmp(names + o, want, sizeof want))
            e->has_debug_info = e->secs[i].type != FRAMES__SYM_SHT_NOBITS;
        if (o < str->size && str->size - o > sizeof zwant - 1 &&
            !memcmp(names + o, zwant, sizeof zwant))
            e->has_debug_info = 1;
    }
}

/* NT_GNU_BUILD_ID in the notes at [off, off + size). */
static void frames__sym_scan_notes(frames_sym_elf *e, uint64_t off, uint64_t size) {
    uint64_t end;
    if (e->build_id || !frames__sym_in(e, off, size)) return;
    end = off + size;
    while (end - off >= 12) {
        uint64_t namesz = frames__sym_rd(e, off, 4), descsz = frames__sym_rd(e, off + 4, 4);
        uint64_t type = frames__sym_rd(e, off + 8, 4), name = off + 12;
        uint64_t desc = name + ((namesz + 3) & ~(uint64_t)3);
        if (desc > end || descsz > end - desc) return;
        if (type == 3 && namesz == 4 && !memcmp(e->d + name, "GNU", 4) && descsz > 0 &&
            descsz <= 64) {
            e->build_id = e->d + desc;
            e->build_id_len = (size_t)descsz;
            return;
        }
        off = desc + ((descsz + 3) & ~(uint64_t)3);
        if (off > end) return;
    }
}

typedef struct frames__sym_sorting {
    frames_sym_elf_symbol sym;
    uint32_t rank, order;   /* global 0, weak 1, local 2 (+3 without a type); position */
} frames__sym_sorting;

static int frames__sym_cmp(const void *a, const void *b) {
    const frames__sym_sorting *x = (const frames__sym_sorting *)a, *y = (const frames__sym_sorting *)b;
    if (x->sym.value != y->sym.value) return x->sym.value < y->sym.value ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Whether a symbol of this type is kept: code (STT_FUNC, STT_GNU_IFUNC, and STT_NOTYPE
   labels of code such as _start, as BFD) or, for data, STT_OBJECT with a size. */
static int frames__sym_wanted(int data, unsigned type, uint64_t size) {
    return data ? type == 1 && size > 0 : type == 2 || type == 10 || type == 0;
}

/* The code (data 0) or data (data 1) symbols of one symbol table section into *out,
   *nout; returns 1 when some were kept, 0 when none. */
static int frames__sym_read_table(frames_sym_elf *e, const frames__sym_sec *tab, int data,
                                  frames_sym_elf_symbol **out, size_t *nout, frames_error *err) {
    uint64_t symsize = e->is64 ? 24u : 16u, entsize = tab->entsize ? tab->entsize : symsize;
    uint64_t count, i, kept = 0;
    const frames__sym_sec *strs;
    frames__sym_sorting *tmp;
    if (!frames__sym_sec_data(e, tab) || entsize < symsize || tab->link >= e->nsecs) return 0;
    strs = &e->secs[tab->link];
    if (strs->type != FRAMES__SYM_SHT_STRTAB || !frames__sym_sec_data(e, strs)) return 0;
    count = tab->size / entsize;
    if (count == 0) return 0;
    tmp = (frames__sym_sorting *)FRAMES_MALLOC((size_t)count * sizeof *tmp, e->actx);
    if (!tmp) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    for (i = 0; i < count; i++) {
        uint64_t b = tab->offset + i * entsize, name, shndx, value, size;
        unsigned info = (unsigned)FRAMES__SYM_F(e, b, 12, 1, 4, 1), type = info & 15, bind = info >> 4;
        const char *s;
        name = frames__sym_rd(e, b, 4);
        shndx = FRAMES__SYM_F(e, b, 14, 2, 6, 2);
        value = FRAMES__SYM_F(e, b, 4, 4, 8, 8);
        size = FRAMES__SYM_F(e, b, 8, 4, 16, 8);
        if (!frames__sym_wanted(data, type, size)) continue;
        if (shndx == 0 || shndx >= 0xff00u || shndx >= e->nsecs ||
            !(e->secs[shndx].flags & FRAMES__SYM_SHF_ALLOC) || name >= strs->size)
            continue;
        s = (const char *)e->d + strs->offset + name;
        tmp[kept].sym.name = s;
        {   /* a name runs to its NUL or to the end of the string table */
            const char *nul = (const char *)memchr(s, 0, (size_t)(strs->size - name));
            tmp[kept].sym.name_len = nul ? (size_t)(nul - s) : (size_t)(strs->size - name);
        }
        if (tmp[kept].sym.name_len == 0) continue;
        if (s[0] == '$' && e->machine != FRAMES__SYM_EM_X86_64 && e->machine != FRAMES__SYM_EM_386)
            continue;   /* ARM/AArch64/RISC-V mapping symbols ($a, $t, $d, $x) */
        if (e->machine == FRAMES__SYM_EM_ARM && !data) value &= ~(uint64_t)1;   /* Thumb bit */
        tmp[kept].sym.value = value;
        tmp[kept].sym.size = size;
        tmp[kept].sym.section = (uint32_t)shndx;
        tmp[kept].rank = (bind == 1 ? 0 : bind == 2 ? 1 : 2) + (type == 0 ? 3 : 0);
        tmp[kept].order = (uint32_t)i;
        kept++;
    }
    if (kept) {
        size_t n = 0;
        frames_sym_elf_symbol *syms;
        qsort(tmp, (size_t)kept, sizeof *tmp, frames__sym_cmp);
        syms = (frames_sym_elf_symbol *)FRAMES_MALLOC((size_t)kept * sizeof *syms, e->actx);
        if (!syms) {
            FRAMES_FREE(tmp, e->actx);
            return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        }
        for (i = 0; i < kept; i++)   /* one per value: the first after sorting */
            if (n == 0 || syms[n - 1].value != tmp[i].sym.value) syms[n++] = tmp[i].sym;
        *out = syms;
        *nout = n;
    }
    FRAMES_FREE(tmp, e->actx);
    return (int)(kept > 0);
}

FRAMES_SYM_DEF void frames_sym_elf_close(frames_sym_elf *e) {
    if (!e) return;
    FRAMES_FREE(e->segs, e->actx);
    FRAMES_FREE(e->secs, e->actx);
    FRAMES_FREE(e->syms, e->actx);
    FRAMES_FREE(e->dsyms, e->actx);
    FRAMES_FREE(e, e->actx);
}

FRAMES_SYM_DEF int frames_sym_elf_open(frames_sym_elf **out, const void *data, size_t size,
                                   void *alloc_ctx, frames_error *err) {
    frames_sym_elf *e;
    const uint8_t *d = (const uint8_t *)data;
    uint32_t i, kind;
    int rc;
    *out = NULL;
    if (size < 16 || memcmp(d, "\177ELF", 4) != 0)
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "not an ELF file");
    if ((d[4] != 1 && d[4] != 2) || (d[5] != 1 && d[5] != 2))
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "unknown ELF class %u or byte order %u",
                                d[4], d[5]);
    if (size < (d[4] == 2 ? 64u : 52u))
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "ELF header cut short (%lu bytes)",
                                (unsigned long)size);
    e = (frames_sym_elf *)FRAMES_MALLOC(sizeof *e, alloc_ctx);
    if (!e) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    memset(e, 0, sizeof *e);
    e->d = d;
    e->n = size;
    e->actx = alloc_ctx;
    e->is64 = d[4] == 2;
    e->be = d[5] == 2;
    e->table = "";
    e->type = (uint32_t)frames__sym_rd(e, 16, 2);
    e->machine = (uint32_t)frames__sym_rd(e, 18, 2);
    if ((rc = frames__sym_read_segments(e, err)) < 0 || (rc = frames__sym_read_sections(e, err)) < 0) {
        frames_sym_elf_close(e);
        return rc;
    }
    frames__sym_read_section_names(e);
    for (i = 0; i < e->nsegs; i++)
        if (e->segs[i].type == FRAMES__SYM_PT_NOTE)
            frames__sym_scan_notes(e, e->segs[i].offset, e->segs[i].filesz);
    for (i = 0; i < e->nsecs; i++)
        if (e->secs[i].type == FRAMES__SYM_SHT_NOTE)
            frames__sym_scan_notes(e, e->secs[i].offset, e->secs[i].size);
    for (kind = 0; kind < 2 && e->nsyms == 0; kind++) {   /* .symtab, else .dynsym */
        uint32_t want = kind == 0 ? FRAMES__SYM_SHT_SYMTAB : FRAMES__SYM_SHT_DYNSYM;
        for (i = 0; i < e->nsecs && e->nsyms == 0; i++) {
            if (e->secs[i].type != want) continue;
            if ((rc = frames__sym_read_table(e, &e->secs[i], 0, &e->syms, &e->nsyms, err)) < 0) {
                frames_sym_elf_close(e);
                return rc;
            }
            if (e->nsyms) e->table = kind == 0 ? ".symtab" : ".dynsym";
        }
    }
    for (kind = 0; kind < 2 && e->ndsyms == 0; kind++) {   /* data: the same order */
        uint32_t want = kind == 0 ? FRAMES__SYM_SHT_SYMTAB : FRAMES__SYM_SHT_DYNSYM;
        for (i = 0; i < e->nsecs && e->ndsyms == 0; i++)
            if (e->secs[i].type == want &&
                (rc = frames__sym_read_table(e, &e->secs[i], 1, &e->dsyms, &e->ndsyms, err)) < 0) {
                frames_sym_elf_close(e);
                return rc;
            }
    }
    *out = e;
    return FRAMES_OK;
}

FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_symbols(const frames_sym_elf *e,
                                                               size_t *n, const char **table) {
    if (n) *n = e->nsyms;
    if (table) *table = e->table;
    return e->syms;
}

FRAMES_SYM_DEF const uint8_t *frames_sym_elf_build_id(const frames_sym_elf *e, size_t *len) {
    if (len) *len = e->build_id_len;
    return e->build_id;
}

FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_data(const frames_sym_elf *e, size_t *n) {
    if (n) *n = e->ndsyms;
    return e->dsyms;
}

/* The last symbol of syms[n] (sorted by value) with value <= addr, or NULL. */
static const frames_sym_elf_symbol *frames__sym_preceding(const frames_sym_elf_symbol *syms,
                                                          size_t n, uint64_t addr) {
    size_t lo = 0, hi = n;
    while (lo < hi) {   /* first symbol with value > addr */
        size_t mid = lo + (hi - lo) / 2;
        if (syms[mid].value <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo ? &syms[lo - 1] : NULL;
}

FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_find_data(const frames_sym_elf *e,
                                                                 uint64_t addr) {
    const frames_sym_elf_symbol *s = frames__sym_preceding(e->dsyms, e->ndsyms, addr);
    return s && addr - s->value < s->size ? s : NULL;
}

/* As addr2line: the symbol with the greatest value <= addr, provided that it lies in the
   section that holds addr (a pc in .plt is not "_init+0x20"). */
FRAMES_SYM_DEF const frames_sym_elf_symbol *frames_sym_elf_find(const frames_sym_elf *e,
                                                            uint64_t addr) {
    const frames_sym_elf_symbol *s = frames__sym_preceding(e->syms, e->nsyms, addr);
    const frames__sym_sec *sec;
    if (!s) return NULL;
    sec = &e->secs[s->section];
    if (addr < sec->addr || addr - sec->addr >= sec->size) return NULL;
    return s;
}

/* The load bias at which [low, high] is one PT_LOAD segment of e (as the kernel maps it,
   page-rounded, or exactly, as perf and frames pt write it) or the whole image (as PIN
   writes it). Returns 0 and sets *bias, or -1 when nothing fits. */
static int frames__sym_match(const frames_sym_elf *e, uint64_t low, uint64_t high,
                             uint64_t *bias) {
    static const uint64_t pages[] = {4096, 16384, 65536, 1};
    uint64_t len = high - low + 1, img_lo = UINT64_MAX, img_hi = 0;
    uint32_t pass, i, p;
    if (len == 0) return -1;   /* [0, 2^64 - 1]: no file is that */
    for (pass = 0; pass < 2; pass++)   /* executable segments first */
        for (i = 0; i < e->nsegs; i++) {
            const frames__sym_seg *s = &e->segs[i];
            if (s->type != FRAMES__ELF_PT_LOAD || !!(s->flags & FRAMES__SYM_PF_X) != (pass == 0))
                continue;
            for (p = 0; p < sizeof pages / sizeof pages[0]; p++) {
                uint64_t start = s->vaddr & ~(pages[p] - 1), end = s->vaddr + s->memsz;
                uint64_t fend = s->vaddr + s->filesz;
                end = (end + pages[p] - 1) & ~(pages[p] - 1);
                if (end < start) continue;
                if (end - start != len && !(pages[p] == 1 && fend - start == len)) continue;
                if (e->type == FRAMES__SYM_ET_EXEC && low != start) continue;
                *bias = low - start;
                return 0;
            }
        }
    for (i = 0; i < e->nsegs; i++)
        if (e->segs[i].type == FRAMES__ELF_PT_LOAD) {
            if (e->segs[i].vaddr < img_lo) img_lo = e->segs[i].vaddr;
            if (e->segs[i].vaddr + e->segs[i].memsz > img_hi) img_hi = e->segs[i].vaddr + e->segs[i].memsz;
        }
    if (img_lo < img_hi && img_hi - img_lo == len &&
        (e->type != FRAMES__SYM_ET_EXEC || low == img_lo)) {
        *bias = low - img_lo;
        return 0;
    }
    return -1;
}

/* --------------------------------------------------------------------------------------
   files: mapped (or read) once, parsed once, shared by every module naming them
   -------------------------------------------------------------------------------------- */

#define FRAMES__SYM_MAX_WARNINGS 64u
#define FRAMES__SYM_CACHE 4096u   /* direct-mapped lookup cache, entries */

typedef struct frames__sym_image {
    uint8_t *data;
    size_t size;
    int mapped;
} frames__sym_image;

#ifdef FRAMES_SYM_LIBDW
typedef struct frames__sym_dw_range {
    uint64_t lo, hi;   /* [lo, hi) */
    Dwarf_Die cu;      /* the compile unit's DIE (valid while the Dwarf is open) */
} frames__sym_dw_range;
#endif

typedef struct frames__sym_file {
    char *path;
    int state;                  /* 0 not read yet, 1 usable, -1 unusable (warned) */
    frames__sym_image img;
    frames_sym_elf *elf;
    frames__sym_image dbg_img;  /* separate debug file (/usr/lib/debug/.build-id/...) */
    frames_sym_elf *dbg_elf;
    const frames_sym_elf *names;   /* where symbols come from: elf or dbg_elf */
#ifdef FRAMES_SYM_LIBDW
    int dw_state;               /* 0 not tried, 1 open, -1 none */
    Elf *dw_elf;
    Dwarf *dw;
    frames__sym_dw_range *ranges;
    size_t nranges;
#endif
} frames__sym_file;

typedef struct frames__sym_module {
    char *name;                 /* NUL-terminated copy */
    size_t name_len, base;
    uint64_t low, high;         /* inclusive */
    uint64_t bias;
    int32_t file;               /* index in files, -1 none */
    int state;                  /* 0 unresolved, 1 file matches, -1 module+offset only */
    uint8_t build_id[64];
    size_t build_id_len;
} frames__sym_module;

typedef struct frames__sym_cached {
    uint64_t pc;
    int valid;
    frames_sym_loc loc;
} frames__sym_cached;

struct frames_sym {
    frames_sym_options opt;
    char *sysroot;
    void *actx;
    frames__sym_module *mods;
    size_t nmods, capmods;
    uint32_t *order;            /* module indices sorted by low address */
    uint64_t *reach;            /* reach[i]: highest `high` among order[0..i] */
    int dirty;
    frames__sym_file *files;
    size_t nfiles, capfiles;
    frames__sym_cached *cache;
    char *target;               /* meta target_path */
    int32_t target_size;
    frames_sym_info info;
    char warnings[FRAMES__SYM_MAX_WARNINGS][240];
};

static void frames__sym_warn(frames_sym *s, const char *fmt, ...) FRAMES__PRINTF(2, 3);
static void frames__sym_warn(frames_sym *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    /* a full list still counts: the caller can say how many more there were */
    if (!FRAMES__WARN_ADD(s->warnings, s->info.nwarnings, fmt, ap)) s->info.nwarnings++;
    va_end(ap);
}

/* Whole file into img (mapped copy-on-write where possible: libdw may write to it).
   Returns 0, or -1 with a reason in why. */
static int frames__sym_load_image(frames_sym *s, const char *path, frames__sym_image *img,
                                  char *why, size_t whylen) {
#ifndef FRAMES_NO_POSIX
    uint64_t size;
    void *p;
    int fd = frames__open_untrusted(path, s->opt.max_file_size, &size);
    /* the path is a trace's (a module) or derived from one (a debug file): a FIFO or a
       device there must not hang us */
    if (fd < 0) {
        snprintf(why, whylen, "cannot open it: %s", frames__untrusted_why(fd));
        return -1;
    }
    if (size == 0 || size > (size_t)-1) {
        snprintf(why, whylen, "not a regular file of 1 to %llu bytes",
                 (unsigned long long)s->opt.max_file_size);
        close(fd);
        return -1;
    }
    p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, whylen, "cannot map it: %s", strerror(errno));
        return -1;
    }
    img->data = (uint8_t *)p;
    img->size = (size_t)size;
    img->mapped = 1;
    return 0;
#else /* (no FIFOs to fear where there is no POSIX) */
    FILE *f = fopen(path, "rb");
    long n;
    if (!f) {
        snprintf(why, whylen, "cannot open it");
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || (uint64_t)n > s->opt.max_file_size ||
        fseek(f, 0, SEEK_SET) != 0 || !(img->data = (uint8_t *)FRAMES_MALLOC((size_t)n, s->actx)) ||
        fread(img->data, 1, (size_t)n, f) != (size_t)n) {
        if (img->data) FRAMES_FREE(img->data, s->actx);
        img->data = NULL;
        fclose(f);
        snprintf(why, whylen, "cannot read it");
        return -1;
    }
    fclose(f);
    img->size = (size_t)n;
    img->mapped = 0;
    return 0;
#endif
}

static void frames__sym_free_image(frames_sym *s, frames__sym_image *img) {
    if (!img->data) return;
#ifndef FRAMES_NO_POSIX
    if (img->mapped) munmap(img->data, img->size);
    else
#endif
        FRAMES_FREE(img->data, s->actx);
    img->data = NULL;
    (void)s;
}

#ifdef FRAMES_SYM_LIBDW
static int frames__sym_range_cmp(const void *a, const void *b) {
    const frames__sym_dw_range *x = (const frames__sym_dw_range *)a, *y = (const frames__sym_dw_range *)b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The address ranges of every compile unit, sorted, so that a pc finds its CU by one
   binary search (.debug_aranges is often missing). */
static void frames__sym_dw_ranges(frames_sym *s, frames__sym_file *f) {
    Dwarf_Off off = 0, next;
    size_t hsize, cap = 0;
    while (dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(f->dw, off + hsize, &cu)) {
            Dwarf_Addr base, start, end;
            ptrdiff_t r = 0;
            while ((r = dwarf_ranges(&cu, r, &base, &start, &end)) > 0) {
                if (start >= end) continue;
                if (f->nranges >= ((size_t)1 << 24) ||   /* bound: 16M ranges */
                    FRAMES__GROW(f->ranges, cap, f->nranges + 1, s->actx) < 0)
                    return;
                f->ranges[f->nranges].lo = start;
                f->ranges[f->nranges].hi = end;
                f->ranges[f->nranges].cu = cu;
                f->nranges++;
            }
        }
        off = next;
    }
    if (f->nranges) qsort(f->ranges, f->nranges, sizeof *f->ranges, frames__sym_range_cmp);
}

/* DWARF of the file itself, else of its separate debug file. */
static void frames__sym_dw_open(frames_sym *s, frames__sym_file *f) {
    frames__sym_image *img = &f->img;
    f->dw_state = -1;
    if (!f->elf->has_debug_info) {
        if (!f->dbg_elf || !f->dbg_elf->has_debug_info) return;
        img = &f->dbg_img;
    }
    elf_version(EV_CURRENT);
    if (!(f->dw_elf = elf_memory((char *)img->data, img->size))) return;
    if (!(f->dw = dwarf_begin_elf(f->dw_elf, DWARF_C_READ, NULL))) {
        elf_end(f->dw_elf);
        f->dw_elf = NULL;
        return;
    }
    frames__sym_dw_ranges(s, f);
    f->dw_state = 1;
}

static void frames__sym_dw_line(frames_sym *s, frames__sym_file *f, uint64_t addr,
                                frames_sym_loc *loc) {
    size_t lo = 0, hi, k;
    Dwarf_Die cu;
    Dwarf_Line *line;
    const char *src;
    int lineno;
    if (f->dw_state == 0) frames__sym_dw_open(s, f);
    if (f->dw_state != 1) return;
    hi = f->nranges;
    while (lo < hi) {   /* first range starting after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (f->ranges[mid].lo <= addr) lo = mid + 1;
        else hi = mid;
    }
    for (k = lo; k > 0 && lo - k < 8; k--)   /* ranges of different CUs rarely overlap */
        if (addr < f->ranges[k - 1].hi) break;
    if (k == 0 || lo - k >= 8) return;
    cu = f->ranges[k - 1].cu;
    if (!(line = dwarf_getsrc_die(&cu, addr))) return;
    if (!(src = dwarf_linesrc(line, NULL, NULL)) || dwarf_lineno(line, &lineno) != 0 || lineno <= 0)
        return;
    loc->file = src;
    loc->file_len = strlen(src);
    loc->line = (uint32_t)lineno;
    loc->found |= FRAMES_SYM_FOUND_LINE;
}
#endif

static void frames__sym_free_file(frames_sym *s, frames__sym_file *f) {
#ifdef FRAMES_SYM_LIBDW
    if (f->dw) dwarf_end(f->dw);
    if (f->dw_elf) elf_end(f->dw_elf);
    FRAMES_FREE(f->ranges, s->actx);
#endif
    frames_sym_elf_close(f->dbg_elf);
    frames__sym_free_image(s, &f->dbg_img);
    frames_sym_elf_close(f->elf);
    frames__sym_free_image(s, &f->img);
    FRAMES_FREE(f->path, s->actx);
}

/* The separate debug file of f, found by build id under the sysroot as gdb and addr2line
   find it: its .symtab names what a stripped file's .dynsym cannot, and it holds the
   DWARF. A missing one is normal; a damaged one is warned about and ignored. */
static void frames__sym_debug_file(frames_sym *s, frames__sym_file *f) {
    char path[4096], why[200];
    size_t i, n, idlen;
    const uint8_t *id = frames_sym_elf_build_id(f->elf, &idlen);
    frames_error err;
    if (idlen < 2) return;
    n = (size_t)snprintf(path, sizeof path, "%s/usr/lib/debug/.build-id/%02x/",
                         s->sysroot ? s->sysroot : "", id[0]);
    for (i = 1; i < idlen && n + 3 < sizeof path; i++)
        n += (size_t)snprintf(path + n, sizeof path - n, "%02x", id[i]);
    if (n + 7 >= sizeof path) return;
    memcpy(path + n, ".debug", 7);
    if (frames__sym_load_image(s, path, &f->dbg_img, why, sizeof why) != 0) return;
    if (frames_sym_elf_open(&f->dbg_elf, f->dbg_img.data, f->dbg_img.size, s->actx, &err) < 0) {
        frames__sym_warn(s, "%s: %s: ignored", path, err.message);
        frames__sym_free_image(s, &f->dbg_img);
        return;
    }
    if (!strcmp(f->dbg_elf->table, ".symtab")) f->names = f->dbg_elf;
}

/* The file at path (index in s->files), read and parsed on first use; -1 out of memory. */
static int32_t frames__sym_file_for(frames_sym *s, const char *path) {
    frames__sym_file *f;
    frames_error err;
    char why[200];
    size_t i;
    for (i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i].path, path)) return (int32_t)i;
    if (s->nfiles >= INT32_MAX || FRAMES__GROW(s->files, s->capfiles, s->nfiles + 1, s->actx) < 0)
        return -1;
    f = &s->files[s->nfiles];
    memset(f, 0, sizeof *f);
    if (!(f->path = frames__strndup(path, strlen(path), s->actx))) return -1;
    s->nfiles++;
    s->info.files++;
    f->state = -1;
    if (frames__sym_load_image(s, path, &f->img, why, sizeof why) != 0) {
        frames__sym_warn(s, "%s: %s: module+offset names only", path, why);
    } else if (frames_sym_elf_open(&f->elf, f->img.data, f->img.size, s->actx, &err) < 0) {
        frames__sym_warn(s, "%s: %s: module+offset names only", path, err.message);
        frames__sym_free_image(s, &f->img);
        if (err.code == FRAMES_E_NOMEM) return -1;
    } else {
        size_t n;
        f->state = 1;
        f->names = f->elf;
        if (strcmp(f->elf->table, ".symtab") || !f->elf->has_debug_info) frames__sym_debug_file(s, f);
        s->info.files_loaded++;
        frames_sym_elf_symbols(f->names, &n, NULL);
        s->info.symbols += n;
    }
    return (int32_t)(s->nfiles - 1);
}

static void frames__sym_hex(char *out, size_t cap, const uint8_t *b, size_t n) {
    size_t i;
    if (cap) out[0] = 0;
    for (i = 0; i < n && 2 * i + 2 < cap; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The meta's target_path names the module: the same path, or a relative one ("./prog",
   relative to the recording's directory) that ends the module's absolute path. */
static int frames__sym_is_target(const char *target, const char *module) {
    size_t tl, ml = strlen(module);
    if (!strcmp(target, module)) return 1;
    if (target[0] == '/') return 0;
    while (target[0] == '.' && target[1] == '/') target += 2;
    tl = strlen(target);
    return tl && tl < ml && module[ml - tl - 1] == '/' && !strcmp(module + ml - tl, target);
}

/* Decide once per module whether its file names its pcs. Returns -1 on out of memory. */
static int frames__sym_resolve(frames_sym *s, frames__sym_module *m) {
    char path[4096];
    frames__sym_file *f;
    size_t idlen;
    const uint8_t *id;
    int32_t fi;
    m->state = -1;
    if (m->name_len == 0 || m->name[0] == '[' || strlen(m->name) != m->name_len) return 0;
    if (m->name[0] == '/' && s->sysroot) {
        if ((size_t)snprintf(path, sizeof path, "%s%s", s->sysroot, m->name) >= sizeof path) return 0;
    } else if ((size_t)snprintf(path, sizeof path, "%s", m->name) >= sizeof path) {
        return 0;
    }
    if ((fi = frames__sym_file_for(s, path)) < 0) return -1;
    f = &s->files[fi];
    if (f->state != 1) return 0;
    if (s->target && s->target_size && frames__sym_is_target(s->target, m->name) &&
        (int32_t)(uint32_t)f->img.size != s->target_size) {
        frames__sym_warn(s, "%s: %llu bytes, the trace recorded %ld: not the traced file, "
                         "module+offset names only", path, (unsigned long long)f->img.size,
                         (long)s->target_size);
        return 0;
    }
    id = frames_sym_elf_build_id(f->elf, &idlen);
    if (m->build_id_len && (idlen != m->build_id_len || memcmp(id, m->build_id, idlen) != 0)) {
        char want[130], have[130];
        frames__sym_hex(want, sizeof want, m->build_id, m->build_id_len);
        frames__sym_hex(have, sizeof have, id, idlen);
        frames__sym_warn(s, "%s: build id %s, the trace names %s: module+offset names only", path,
                         idlen ? have : "(none)", want);
        return 0;
    }
    if (frames__sym_match(f->elf, m->low, m->high, &m->bias) != 0) {
        frames__sym_warn(s, "%s does not match the mapping 0x%llx-0x%llx (no segment of %llu "
                         "bytes at a possible address): module+offset names only", path,
                         (unsigned long long)m->low, (unsigned long long)m->high,
                         (unsigned long long)(m->high - m->low + 1));
        return 0;
    }
    m->file = fi;
    m->state = 1;
    return 0;
}

/* --------------------------------------------------------------------------------------
   the module table
   -------------------------------------------------------------------------------------- */

FRAMES_SYM_DEF void frames_sym_options_default(frames_sym_options *o) {
    memset(o, 0, sizeof *o);
    o->max_file_size = (uint64_t)4 << 30;
}

FRAMES_SYM_DEF int frames_sym_open(frames_sym **out, const frames_sym_options *o, frames_error *err) {
    frames_sym_options def;
    frames_sym *s;
    if (!o) {
        frames_sym_options_default(&def);
        o = &def;
    }
    *out = NULL;
    s = (frames_sym *)FRAMES_MALLOC(sizeof *s, o->alloc_ctx);
    if (!s) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    memset(s, 0, sizeof *s);
    s->opt = *o;
    s->actx = o->alloc_ctx;
    if (!s->opt.max_file_size) s->opt.max_file_size = (uint64_t)4 << 30;
    if (o->sysroot && *o->sysroot) {
        size_t n = strlen(o->sysroot);
        while (n > 1 && o->sysroot[n - 1] == '/') n--;   /* "/x/" + "/lib" */
        if (!(s->sysroot = frames__strndup(o->sysroot, n, s->actx))) {
            FRAMES_FREE(s, s->actx);
            return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        }
    }
    s->opt.sysroot = s->sysroot;
#ifdef FRAMES_SYM_LIBDW
    s->info.have_dw = 1;
#endif
    *out = s;
    return FRAMES_OK;
}

FRAMES_SYM_DEF void frames_sym_close(frames_sym *s) {
    size_t i;
    if (!s) return;
    for (i = 0; i < s->nfiles; i++) frames__sym_free_file(s, &s->files[i]);
    for (i = 0; i < s->nmods; i++) FRAMES_FREE(s->mods[i].name, s->actx);
    FRAMES_FREE(s->files, s->actx);
    FRAMES_FREE(s->mods, s->actx);
    FRAMES_FREE(s->order, s->actx);
    FRAMES_FREE(s->reach, s->actx);
    FRAMES_FREE(s->cache, s->actx);
    FRAMES_FREE(s->sysroot, s->actx);
    FRAMES_FREE(s->target, s->actx);
    FRAMES_FREE(s, s->actx);
}

FRAMES_SYM_DEF int frames_sym_add_module(frames_sym *s, const char *name, size_t name_len,
                                     uint64_t low, uint64_t high, const void *build_id,
                                     size_t build_id_len) {
    frames__sym_module *m;
    size_t i;
    if (low > high || build_id_len > sizeof m->build_id) return FRAMES_E_INVALID;
    if (s->nmods >= UINT32_MAX || FRAMES__GROW(s->mods, s->capmods, s->nmods + 1, s->actx) < 0)
        return FRAMES_E_NOMEM;
    m = &s->mods[s->nmods];
    memset(m, 0, sizeof *m);
    if (!(m->name = frames__strndup(name ? name : "", name ? name_len : 0, s->actx)))
        return FRAMES_E_NOMEM;
    m->name_len = name ? name_len : 0;
    for (i = 0; i < m->name_len; i++)
        if (m->name[i] == '/') m->base = i + 1;
    m->low = low;
    m->high = high;
    m->file = -1;
    if (build_id_len) memcpy(m->build_id, build_id, build_id_len);
    m->build_id_len = build_id_len;
    s->nmods++;
    s->info.modules++;
    s->dirty = 1;
    return FRAMES_OK;
}

FRAMES_SYM_DEF int frames_sym_add_frame(frames_sym *s, const frames_frame *f) {
    const frames_modload_frame *m = &f->modload;
    if (!(f->present & (1u << FRAMES_KIND_MODLOAD)) && f->kind != FRAMES_KIND_MODLOAD) return FRAMES_OK;
    if (m->low_address > m->high_address) return FRAMES_OK;   /* an empty range names nothing */
    return frames_sym_add_module(s, (const char *)m->module_name.ptr, m->module_name.len,
                                 m->low_address, m->high_address, NULL, 0);
}

FRAMES_SYM_DEF int frames_sym_add_reader(frames_sym *s, frames_reader *r) {
    frames_decoder d;
    frames_raw raw;
    frames_frame f;
    int rc;
    frames_decoder_init(&d, NULL, 0, s->actx);
    while ((rc = frames_reader_next_raw(r, &raw)) != 0) {
        int kind;
        if (rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT) continue;
        if (rc < 0) break;
        if (raw.payload.len == 0) continue;
        /* only modload frames and frames that start unusually need decoding */
        kind = frames_frame_peek_kind(raw.payload.ptr, raw.payload.len);
        if (kind != FRAMES_KIND_NONE && kind != FRAMES_KIND_MODLOAD) continue;
        if (frames_decode_frame(&d, raw.payload.ptr, raw.payload.len, &f, NULL) < 0) continue;
        if ((rc = frames_sym_add_frame(s, &f)) < 0) break;
    }
    frames_decoder_free(&d);
    return rc < 0 ? rc : FRAMES_OK;
}

FRAMES_SYM_DEF void frames_sym_set_meta(frames_sym *s, const frames_meta *m) {
    FRAMES_FREE(s->target, s->actx);
    s->target = NULL;
    s->target_size = 0;
    if (!m || !m->target_path.len) return;
    s->target = frames__strndup((const char *)m->target_path.ptr, m->target_path.len, s->actx);
    s->target_size = m->fstats_size;
}

/* Sort the modules by low address once they changed; reach[] lets a lookup stop walking
   back as soon as no earlier module can still cover the pc. */
/* --------------------------------------------------------------------------------------
   lookup and formatting
   -------------------------------------------------------------------------------------- */

static int frames__sym_reindex(frames_sym *s) {
    size_t i;
    uint32_t *order;
    uint64_t *reach;
    order = (uint32_t *)FRAMES_REALLOC(s->order, (s->nmods ? s->nmods : 1) * sizeof *order, s->actx);
    if (!order) return FRAMES_E_NOMEM;
    s->order = order;
    reach = (uint64_t *)FRAMES_REALLOC(s->reach, (s->nmods ? s->nmods : 1) * sizeof *reach, s->actx);
    if (!reach) return FRAMES_E_NOMEM;
    s->reach = reach;
    /* insertion sort: modules arrive mostly in address order or in few numbers; a stable
       order keeps the later of two equal modules later */
    for (i = 0; i < s->nmods; i++) {
        size_t j = i;
        while (j > 0 && s->mods[order[j - 1]].low > s->mods[i].low) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint32_t)i;
    }
    for (i = 0; i < s->nmods; i++) {
        uint64_t h = s->mods[order[i]].high;
        reach[i] = i && reach[i - 1] > h ? reach[i - 1] : h;
    }
    if (!s->cache) {
        s->cache = (frames__sym_cached *)FRAMES_MALLOC(FRAMES__SYM_CACHE * sizeof *s->cache, s->actx);
        if (!s->cache) return FRAMES_E_NOMEM;
    }
    memset(s->cache, 0, FRAMES__SYM_CACHE * sizeof *s->cache);
    s->dirty = 0;
    return FRAMES_OK;
}

/* The module holding pc that was added last, or NULL. */
static frames__sym_module *frames__sym_module_at(frames_sym *s, uint64_t pc) {
    size_t lo = 0, hi = s->nmods, k;
    frames__sym_module *best = NULL;
    uint32_t best_index = 0;
    while (lo < hi) {   /* first module with low > pc */
        size_t mid = lo + (hi - lo) / 2;
        if (s->mods[s->order[mid]].low <= pc) lo = mid + 1;
        else hi = mid;
    }
    for (k = lo; k > 0 && s->reach[k - 1] >= pc; k--) {
        uint32_t idx = s->order[k - 1];
        if (s->mods[idx].high >= pc && (!best || idx > best_index)) {
            best = &s->mods[idx];
            best_index = idx;
        }
    }
    return best;
}

FRAMES_SYM_DEF int frames_sym_lookup(frames_sym *s, uint64_t pc, frames_sym_loc *loc) {
    frames__sym_cached *c;
    frames__sym_module *m;
    int rc;
    memset(loc, 0, sizeof *loc);
    s->info.lookups++;
    if (s->dirty && (rc = frames__sym_reindex(s)) < 0) return rc;
    if (!s->cache) return 0;   /* no module at all */
    c = &s->cache[(pc ^ (pc >> 12) ^ (pc >> 24)) & (FRAMES__SYM_CACHE - 1)];
    if (c->valid && c->pc == pc) {
        s->info.cache_hits++;
        *loc = c->loc;
        return (int)loc->found;
    }
    if ((m = frames__sym_module_at(s, pc)) != NULL) {
        loc->found = FRAMES_SYM_FOUND_MODULE;
        loc->module = m->name;
        loc->module_len = m->name_len;
        loc->module_base = m->base;
        loc->module_offset = pc - m->low;
        if (m->state == 0 && !(s->opt.flags & FRAMES_SYM_NO_FILES) &&
            frames__sym_resolve(s, m) < 0)
            return FRAMES_E_NOMEM;
        if (m->state == 1) {
            frames__sym_file *f = &s->files[m->file];
            const frames_sym_elf_symbol *sym;
            loc->file_address = pc - m->bias;
            loc->found |= FRAMES_SYM_FOUND_ADDRESS;
            if ((sym = frames_sym_elf_find(f->names, loc->file_address)) != NULL) {
                loc->found |= FRAMES_SYM_FOUND_SYMBOL;
                loc->symbol = sym->name;
                loc->symbol_len = sym->name_len;
                loc->symbol_offset = loc->file_address - sym->value;
            }
#ifdef FRAMES_SYM_LIBDW
            if (!(s->opt.flags & FRAMES_SYM_NO_LINES)) frames__sym_dw_line(s, f, loc->file_address, loc);
#endif
        }
    }
    c->pc = pc;
    c->valid = 1;
    c->loc = *loc;
    return (int)loc->found;
}

/* Whether module m's file (read when not yet) has a data object at addr: fills loc. */
static int frames__sym_data_in(frames_sym *s, frames__sym_module *m, uint64_t addr,
                               frames_sym_loc *loc) {
    const frames_sym_elf_symbol *sym;
    if (m->state == 0 && !(s->opt.flags & FRAMES_SYM_NO_FILES) && frames__sym_resolve(s, m) < 0)
        return FRAMES_E_NOMEM;
    if (m->state != 1 || !(sym = frames_sym_elf_find_data(s->files[m->file].names, addr - m->bias)))
        return 0;
    loc->found = FRAMES_SYM_FOUND_MODULE | FRAMES_SYM_FOUND_ADDRESS | FRAMES_SYM_FOUND_SYMBOL;
    loc->module = m->name;
    loc->module_len = m->name_len;
    loc->module_base = m->base;
    loc->module_offset = addr - m->low;
    loc->file_address = addr - m->bias;
    loc->symbol = sym->name;
    loc->symbol_len = sym->name_len;
    loc->symbol_offset = loc->file_address - sym->value;
    loc->symbol_size = sym->size;
    return (int)loc->found;
}

FRAMES_SYM_DEF int frames_sym_lookup_data(frames_sym *s, uint64_t addr, frames_sym_loc *loc) {
    frames__sym_module *m;
    size_t i;
    int rc;
    memset(loc, 0, sizeof *loc);
    if (s->dirty && (rc = frames__sym_reindex(s)) < 0) return rc;
    if ((m = frames__sym_module_at(s, addr)) != NULL && (rc = frames__sym_data_in(s, m, addr, loc)))
        return rc;
    for (i = 0; i < s->nmods; i++)
        if (&s->mods[i] != m && (rc = frames__sym_data_in(s, &s->mods[i], addr, loc)))
            return rc;
    return 0;
}

FRAMES_SYM_DEF size_t frames_sym_format(const frames_sym_loc *loc, unsigned flags, char *buf,
                                    size_t cap) {
    frames__text o;
    size_t skip = flags & FRAMES_SYM_FMT_FULL_PATH ? 0 : loc->module_base;
    o.buf = buf;
    o.cap = cap;
    o.len = 0;
    if (loc->found & FRAMES_SYM_FOUND_MODULE) {
        frames__text_put(&o, loc->module + skip, loc->module_len - skip);
        if (loc->found & FRAMES_SYM_FOUND_SYMBOL) {
            frames__text_put(&o, "!", 1);
            frames__text_put(&o, loc->symbol, loc->symbol_len);
        }
        frames__text_put(&o, "+", 1);
        frames__text_hex(&o, loc->found & FRAMES_SYM_FOUND_SYMBOL ? loc->symbol_offset : loc->module_offset);
    }
    if ((flags & FRAMES_SYM_FMT_LINE) && (loc->found & FRAMES_SYM_FOUND_LINE)) {
        frames__text_put(&o, " at ", 4);
        frames__text_put(&o, loc->file, loc->file_len);
        frames__text_put(&o, ":", 1);
        frames__text_u64(&o, loc->line);
    }
    return frames__text_end(&o);
}

#ifndef FRAMES_NO_TEXT
static int frames__sym_json_u64(frames_out_fn out, void *ctx, const char *key, uint64_t v) {
    char t[64];
    int n = snprintf(t, sizeof t, ",\"%s\":%llu", key, (unsigned long long)v);
    return out(ctx, t, (size_t)n) ? FRAMES_E_IO : 0;
}

static int frames__sym_json_str(frames_out_fn out, void *ctx, const char *key, const char *p,
                                size_t n) {
    char t[32];
    int k = snprintf(t, sizeof t, ",\"%s\":", key);
    if (out(ctx, t, (size_t)k)) return FRAMES_E_IO;
    return frames_print_json_string(p, n, out, ctx) < 0 ? FRAMES_E_IO : 0;
}

FRAMES_SYM_DEF int frames_sym_print_json(const frames_sym_loc *loc, frames_out_fn out, void *ctx) {
    int rc = 0;
    if (!(loc->found & FRAMES_SYM_FOUND_MODULE)) return 0;
    rc |= frames__sym_json_str(out, ctx, "module", loc->module, loc->module_len);
    rc |= frames__sym_json_u64(out, ctx, "module_offset", loc->module_offset);
    if (loc->found & FRAMES_SYM_FOUND_ADDRESS)
        rc |= frames__sym_json_u64(out, ctx, "file_address", loc->file_address);
    if (loc->found & FRAMES_SYM_FOUND_SYMBOL) {
        rc |= frames__sym_json_str(out, ctx, "symbol", loc->symbol, loc->symbol_len);
        rc |= frames__sym_json_u64(out, ctx, "symbol_offset", loc->symbol_offset);
    }
    if (loc->found & FRAMES_SYM_FOUND_LINE) {
        rc |= frames__sym_json_str(out, ctx, "file", loc->file, loc->file_len);
        rc |= frames__sym_json_u64(out, ctx, "line", loc->line);
    }
    return rc ? FRAMES_E_IO : 0;
}
#endif

FRAMES_SYM_DEF void frames_sym_info_get(const frames_sym *s, frames_sym_info *info) { *info = s->info; }

FRAMES_SYM_DEF const char *frames_sym_warning(const frames_sym *s, uint32_t i) {
    return i < s->info.nwarnings && i < FRAMES__SYM_MAX_WARNINGS ? s->warnings[i] : "";
}

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_SYM_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_SYM_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

/*
 * MIT License
 *
 * Copyright (c) 2026 the frames authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
