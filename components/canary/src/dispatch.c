#include <stdio.h>
#include <string.h>

#include "canary.h"

#if defined(__riscv)
#include <sys/auxv.h>
#define CANARY_ARCH "riscv64"
#define CANARY_HWCAP_V (1UL << ('V' - 'A'))
static int vector_hw(void) { return (getauxval(AT_HWCAP) & CANARY_HWCAP_V) != 0; }
#elif defined(__aarch64__)
#define CANARY_ARCH "arm64"
static int vector_hw(void) { return 0; }
#elif defined(__x86_64__)
#define CANARY_ARCH "amd64"
static int vector_hw(void) { return 0; }
#else
#error "canary: unknown architecture"
#endif

static float a_buf[CANARY_N];
static float b_buf[CANARY_N];

canary_result canary_run(void) {
    canary_result r;
    memset(&r, 0, sizeof r);
    r.arch = CANARY_ARCH;
    r.vector = vector_hw();
    r.kernel = "scalar";
    r.vlenb = -1;
    canary_fill(a_buf, b_buf, CANARY_N);
#if CANARY_HAVE_RVV
    if (r.vector) {
        r.kernel = "rvv";
        r.vlenb = canary_rvv_vlenb();
        r.checksum = canary_dot_rvv(a_buf, b_buf, CANARY_N);
        return r;
    }
#endif
    r.checksum = canary_dot_scalar(a_buf, b_buf, CANARY_N);
    return r;
}

int canary_format_json(const canary_result *r, char *buffer, size_t size) {
    unsigned int bits;
    memcpy(&bits, &r->checksum, sizeof bits);
    return snprintf(buffer, size,
                    "{\"arch\": \"%s\", \"vector\": %s, \"kernel\": \"%s\", \"vlenb\": %ld, "
                    "\"n\": %d, \"checksum\": %.1f, \"checksum_bits\": \"0x%08x\"}",
                    r->arch, r->vector ? "true" : "false", r->kernel, r->vlenb, CANARY_N,
                    (double)r->checksum, bits);
}
