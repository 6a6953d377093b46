#include "canary.h"

void canary_fill(float *a, float *b, size_t n) {
    /* Small integers: every product and partial sum is an integer below 2^24, so any summation
       order gives the same float, bit for bit. */
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)((long)((i * 37) % 17) - 8);
        b[i] = (float)((long)((i * 11) % 13) - 6);
    }
}

float canary_dot_scalar(const float *a, const float *b, size_t n) {
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++) {
        sum += a[i] * b[i];
    }
    return sum;
}
