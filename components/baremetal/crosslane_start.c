/* crosslane_start.c - what a bare-metal RISC-V program under qemu-system needs so that no failure is silent.
 *
 * Linked into every bare-metal program crosslane builds (with picolibc's --crt0=hosted, whose exit path ends
 * in semihosting SYS_EXIT: qemu exits with main's return value). Its constructor runs before main and
 *  - points mtvec at a reporter: any trap (an illegal instruction on a CPU without V, an access fault) prints
 *    "CROSSLANE-TRAP nonce=<the run's> mcause=<n> mepc=0x<pc> mtval=0x<v>" through semihosting and exits
 *    128 + mcause, instead of the default mtvec of 0, where the CPU faults at address 0 for ever (a "hang"). The
 *    nonce is the semihosting command line the runner gives each run (SYS_GET_CMDLINE): a line a program prints
 *    by itself does not have it, so the runner's verdict cannot be printed;
 *  - enables the vector unit (mstatus.VS) only when misa says the CPU has V: picolibc's crt0 sets only FS, so
 *    without this the first vector instruction traps even on a CPU with V.
 */
#include <stdio.h>
#include <unistd.h>

/* The reporter's own stack: a trap with a broken sp still reports. */
__attribute__((aligned(16), used)) unsigned char crosslane_trap_stack[4096];

/* A semihosting call (the RISC-V semihosting spec's sequence, uncompressed): operation in a0, block in a1. */
static long crosslane_semihost(long op, void *block)
{
    register long a0 __asm__("a0") = op;
    register void *a1 __asm__("a1") = block;
    __asm__ volatile(".option push\n.option norvc\n.balign 16\n"
                     "slli x0, x0, 0x1f\nebreak\nsrai x0, x0, 7\n.option pop"
                     : "+r"(a0) : "r"(a1) : "memory");
    return a0;
}

__attribute__((noreturn, used)) void crosslane_trap_report(void)
{
    unsigned long mcause, mepc, mtval;
    static char nonce[96];
    struct { char *buffer; long length; } cmdline = {nonce, sizeof nonce - 1};
    __asm__ volatile("csrr %0, mcause" : "=r"(mcause));
    __asm__ volatile("csrr %0, mepc" : "=r"(mepc));
    __asm__ volatile("csrr %0, mtval" : "=r"(mtval));
    if (crosslane_semihost(0x15 /* SYS_GET_CMDLINE */, &cmdline) != 0 || cmdline.length < 0)
        cmdline.length = 0;
    nonce[cmdline.length] = '\0';
    printf("CROSSLANE-TRAP nonce=%s mcause=%lu mepc=0x%lx mtval=0x%lx\n", nonce, mcause, mepc, mtval);
    fflush(stdout);
    _exit(128 + (int)(mcause & 0x3f));
}

/* Direct-mode mtvec needs a 4-byte aligned entry. */
__asm__(".section .text.crosslane_trap_entry,\"ax\",@progbits\n"
        ".balign 4\n"
        ".globl crosslane_trap_entry\n"
        "crosslane_trap_entry:\n"
        "  la   sp, crosslane_trap_stack + 4096\n"
        "  call crosslane_trap_report\n"
        "1: j 1b\n"
        ".previous\n");
extern void crosslane_trap_entry(void);

__attribute__((constructor(101))) static void crosslane_start(void)
{
    unsigned long misa;
    __asm__ volatile("csrw mtvec, %0" ::"r"(crosslane_trap_entry));
    __asm__ volatile("csrr %0, misa" : "=r"(misa));
    if (misa & (1UL << ('V' - 'A')))
        __asm__ volatile("csrs mstatus, %0" ::"r"(1UL << 9)); /* mstatus.VS = Initial */
}
