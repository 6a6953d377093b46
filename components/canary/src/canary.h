#ifndef CANARY_H
#define CANARY_H

#include <stddef.h>

#if defined(CANARY_STATIC)
#define CANARY_API
#elif defined(CANARY_BUILDING)
#define CANARY_API __attribute__((visibility("default")))
#else
#define CANARY_API
#endif

#define CANARY_N 4096

typedef struct {
    const char *arch;     /* "amd64", "arm64", "riscv64" */
    int vector;           /* the CPU reports a vector unit the canary has a kernel family for */
    const char *kernel;   /* "scalar" or "rvv" */
    long vlenb;           /* bytes per vector register; -1 when no vector kernel runs */
    float checksum;       /* dot product of the deterministic input; exact in float */
} canary_result;

CANARY_API void canary_fill(float *a, float *b, size_t n);
CANARY_API float canary_dot_scalar(const float *a, const float *b, size_t n);
CANARY_API canary_result canary_run(void);
CANARY_API int canary_format_json(const canary_result *r, char *buffer, size_t size);

/* Internal: present only when the RVV kernel was built. */
float canary_dot_rvv(const float *a, const float *b, size_t n);
long canary_rvv_vlenb(void);

#endif
