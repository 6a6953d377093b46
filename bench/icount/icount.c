/*
 * A QEMU TCG plugin that counts the guest instructions a program executes (all its threads), for
 * bench_ort_rvv.py: work measured as instructions, not as qemu's wall time (qemu emulates vector code slowly).
 *
 * Loaded by a dynamically linked qemu-user (Debian's qemu-user; the static builds take no plugins):
 *   qemu-riscv64 -cpu ... -plugin libicount.so,out=FILE PROGRAM ARGS
 * At the guest's exit it writes "icount: insns=N" to FILE (stderr without out=).
 *
 * Each translated block adds its instruction count when it is entered, atomically, so threads of the guest count
 * too. A block left early by an exception counts whole: the benchmark's programs raise none.
 *
 * No Debian package ships qemu-plugin.h, so the few declarations of QEMU's plugin API (version 1, QEMU 7.2) that
 * this file uses are stated here.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

static uint64_t executed;
static const char *out_path;

static void block_entered(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    __atomic_fetch_add(&executed, (uint64_t)(uintptr_t)userdata, __ATOMIC_RELAXED);
}

static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, block_entered, QEMU_PLUGIN_CB_NO_REGS,
                                         (void *)(uintptr_t)qemu_plugin_tb_n_insns(tb));
}

static void guest_exited(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    FILE *out = out_path ? fopen(out_path, "w") : NULL;
    fprintf(out ? out : stderr, "icount: insns=%" PRIu64 "\n", __atomic_load_n(&executed, __ATOMIC_RELAXED));
    if (out)
        fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) != 0) {
            fprintf(stderr, "icount: unknown option '%s' (only out=FILE)\n", argv[i]);
            return -1;
        }
        out_path = strdup(argv[i] + 4);
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
    qemu_plugin_register_atexit_cb(id, guest_exited, NULL);
    return 0;
}
