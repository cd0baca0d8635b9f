/* probes.h - the programs that the recording suites (test_record_cmd, test_record_vg) build
   and trace with both engines, so that each engine is checked on the same code. */
#ifndef FRAMES_TESTS_PROBES_H
#define FRAMES_TESTS_PROBES_H

/* Static, no libc: a loop, a load, a store, a call, push/pop, a vector load,
   write(1, "hi\n", 3), exit(7). Labels name the instructions the tests look at.
   Build: "S", "-nostdlib -static". */
static const char probe_prog_src[] =
    "        .globl _start, L_load, L_store, L_call, L_push, L_pop, L_vec, L_write, L_exit, f, buf, msg\n"
    "        .data\n"
    "buf:    .quad 0x1122334455667788\n"
    "slot:   .quad 7\n"
    "msg:    .ascii \"hi\\n\"\n"
    "        .text\n"
    "_start: mov $1000, %ecx\n"
    "1:      add $1, %rax\n"
    "        dec %ecx\n"
    "        jnz 1b\n"
    "        lea buf(%rip), %rbx\n"
    "L_load: mov (%rbx), %rdx\n"
    "L_store: movq $0x99, 8(%rbx)\n"
    "L_call: call f\n"
    "L_push: push %rdx\n"
    "L_pop:  pop %r8\n"
    "L_vec:  movdqu (%rbx), %xmm1\n"
    "        mov $1, %eax\n"
    "        mov $1, %edi\n"
    "        lea msg(%rip), %rsi\n"
    "        mov $3, %edx\n"
    "L_write: syscall\n"
    "        mov $60, %eax\n"
    "        mov $7, %edi\n"
    "L_exit: syscall\n"
    "f:      ret\n";

/* Instructions probe_prog_src executes, counted by hand: mov, 1000 x (add, dec, jnz), then
   lea, load, store, call, ret, push, pop, movdqu, 4 movs, syscall, 2 movs, syscall. */
#define PROBE_PROG_INSNS 3017

/* A second thread runs a 500-iteration loop at thread_loop and writes "t\n".
   Build: "c", "-O1 -static -pthread". */
static const char probe_threads_src[] =
    "#include <pthread.h>\n"
    "#include <unistd.h>\n"
    "static void *work(void *p) {\n"
    "    __asm__ volatile(\"mov $500, %%ecx\\n.globl thread_loop\\nthread_loop: dec %%ecx\\n jnz thread_loop\"\n"
    "                     ::: \"rcx\", \"cc\");\n"
    "    write(1, \"t\\n\", 2);\n"
    "    return p;\n"
    "}\n"
    "int main(void) {\n"
    "    pthread_t t;\n"
    "    pthread_create(&t, 0, work, 0);\n"
    "    pthread_join(t, 0);\n"
    "    return 0;\n"
    "}\n";

/* The child writes "child\n" and exits 3; the parent returns 0 when it saw that.
   Build: "c", "-O1 -static". */
static const char probe_fork_src[] =
    "#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "int main(void) {\n"
    "    int st;\n"
    "    pid_t p = fork();\n"
    "    if (p == 0) { write(1, \"child\\n\", 6); _exit(3); }\n"
    "    waitpid(p, &st, 0);\n"
    "    return WEXITSTATUS(st) == 3 ? 0 : 1;\n"
    "}\n";

#endif
