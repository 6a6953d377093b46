/* picolibc.ld sizes the stack from __stack_size when an object defines it; `-Wl,--defsym=__stack_size=` is
 * evaluated after the script's PROVIDE and is ignored (measured with ld 2.47). 256 KiB: kernels recurse little,
 * but logging formats on the stack. */
    .globl __stack_size
    .equ __stack_size, 0x40000
