/* The bundled program inside the image: there is no file system on bare metal. PROGRAM_FILE is a quoted path
 * given by CMakeLists.txt. */
    .section .rodata.crosslane_program,"a",@progbits
    .balign 1024
    .globl crosslane_program_start
crosslane_program_start:
    .incbin PROGRAM_FILE
    .globl crosslane_program_end
crosslane_program_end:
    .byte 0
