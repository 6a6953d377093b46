#include <riscv_vector.h>

#include "canary.h"

float canary_dot_rvv(const float *a, const float *b, size_t n) {
    size_t vlmax = __riscv_vsetvlmax_e32m1();
    vfloat32m1_t acc = __riscv_vfmv_v_f_f32m1(0.0f, vlmax);
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e32m1(n - i);
        vfloat32m1_t va = __riscv_vle32_v_f32m1(a + i, vl);
        vfloat32m1_t vb = __riscv_vle32_v_f32m1(b + i, vl);
        acc = __riscv_vfmacc_vv_f32m1_tu(acc, va, vb, vl);
        i += vl;
    }
    vfloat32m1_t zero = __riscv_vfmv_v_f_f32m1(0.0f, vlmax);
    return __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredusum_vs_f32m1_f32m1(acc, zero, vlmax));
}

long canary_rvv_vlenb(void) {
    return (long)__riscv_vsetvlmax_e8m1();
}
