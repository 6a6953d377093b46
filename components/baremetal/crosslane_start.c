/* crosslane_start.c - what a bare-metal RISC-V program under qemu-system needs so that no failure is silent.
 *
 * Linked into every bare-metal program crosslane builds (with picolibc's --crt0=hosted, whose exit path ends
 * in semihosting SYS_EXIT: qemu exits with main's return value). Its constructor runs before main and
 *  - points mtvec at a reporter: any trap (an illegal instruction on a CPU without V, an access fault) prints
 *    "CROSSLANE-TRAP mcause=<n> mepc=0x<pc> mtval=0x<v>" through semihosting and exits 128 + mcause, instead of
 *    the default mtvec of 0, where the CPU faults at address 0 for ever (a "hang");
 *  - enables the vector unit (mstatus.VS) only when misa says the CPU has V: picolibc's crt0 sets only FS, so
 *    without this the first vector instruction traps even on a CPU with V.
 */
#include <stdio.h>
#include <unistd.h>

/* The reporter's own stack: a trap with a broken sp still reports. */
__attribute__((aligned(16), used)) unsigned char crosslane_trap_stack[4096];

__attribute__((noreturn, used)) void crosslane_trap_report(void)
{
    unsigned long mcause, mepc, mtval;
    __asm__ volatile("csrr %0, mcause" : "=r"(mcause));
    __asm__ volatile("csrr %0, mepc" : "=r"(mepc));
    __asm__ volatile("csrr %0, mtval" : "=r"(mtval));
    printf("CROSSLANE-TRAP mcause=%lu mepc=0x%lx mtval=0x%lx\n", mcause, mepc, mtval);
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
