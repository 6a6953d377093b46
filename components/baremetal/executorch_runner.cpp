/*
 * executorch_runner.cpp - ExecuTorch's portable runtime on bare metal, for a bundled program (.bpte).
 *
 * The .bpte is linked into the image (program_blob.S, .incbin). The runner loads it with BufferDataLoader,
 * plans memory from static arenas, loads bundled input set 0, runs "forward" (or the program's first method),
 * verifies the outputs against the bundled expected outputs and prints
 *     TEST: BundleIO index[0] Test_result: PASS|FAIL
 * as examples/portable/executor_runner does on Linux. main returns 0 (PASS) or 1 (FAIL/error); with picolibc's
 * crt0-hosted + libsemihost, qemu exits with that code. A trap is reported by crosslane_start.c.
 *
 * Build-time knobs: BM_METHOD_ARENA (bytes, method allocator incl. planned buffers), BM_TEMP_ARENA,
 * BM_RTOL / BM_ATOL.
 */
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>

#ifndef BM_METHOD_ARENA
#define BM_METHOD_ARENA (1u << 20)
#endif
#ifndef BM_TEMP_ARENA
#define BM_TEMP_ARENA (1u << 20)
#endif
#ifndef BM_RTOL
#define BM_RTOL 0.01
#endif
#ifndef BM_ATOL
#define BM_ATOL 0.01
#endif

using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;

extern "C" const uint8_t crosslane_program_start[];
extern "C" const uint8_t crosslane_program_end[];

alignas(64) static uint8_t method_arena[BM_METHOD_ARENA];
alignas(64) static uint8_t temp_arena[BM_TEMP_ARENA];

/* ---- PAL overrides (runtime/platform/default/minimal.cpp has weak no-op versions) ---- */
/* qemu virt: ACLINT mtime at 0x0200bff8, 10 MHz -> 100 ns per tick. */
static inline uint64_t bm_mtime(void) {
#if __riscv_xlen == 64
  return *(volatile uint64_t*)0x0200bff8u;
#else
  uint32_t hi, lo;
  do {
    hi = *(volatile uint32_t*)0x0200bffcu;
    lo = *(volatile uint32_t*)0x0200bff8u;
  } while (hi != *(volatile uint32_t*)0x0200bffcu);
  return ((uint64_t)hi << 32) | lo;
#endif
}
extern "C" et_timestamp_t et_pal_current_ticks(void) {
  return bm_mtime();
}
extern "C" et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {
  return {100, 1};
}
extern "C" void et_pal_emit_log_message(
    et_timestamp_t, et_pal_log_level_t level, const char* filename,
    const char*, size_t line, const char* message, size_t length) {
  const char* base = std::strrchr(filename, '/');
  std::printf("%c %s:%u] %.*s\n", (char)level, base ? base + 1 : filename,
              (unsigned)line, (int)length, message);
}
extern "C" ET_NORETURN void et_pal_abort(void) {
  std::fflush(stdout);
  std::_Exit(134); /* semihosting exit, not a silent ebreak/trap */
}

static int fail(const char* what, Error e) {
  std::printf("%s failed: 0x%" PRIx32 "\n", what, (uint32_t)e);
  std::printf("TEST: BundleIO index[0] Test_result: FAIL\n");
  return 1;
}

int main(void) {
  executorch::runtime::runtime_init();
  void* file = (void*)crosslane_program_start;
  size_t file_len = (size_t)(crosslane_program_end - crosslane_program_start);
  std::printf("executorch_runner: bundled program of %zu bytes at %p\n", file_len, file);

  if (!executorch::bundled_program::is_bundled_program(file, file_len)) {
    std::printf("not a bundled program\n");
    return fail("is_bundled_program", Error::InvalidProgram);
  }
  const void* pte;
  size_t pte_len;
  Error e = executorch::bundled_program::get_program_data(file, file_len, &pte, &pte_len);
  if (e != Error::Ok) return fail("get_program_data", e);

  BufferDataLoader loader(pte, pte_len);
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) return fail("Program::load", program.error());

  const char* method_name = "forward";
  {
    Result<const char*> n = program->get_method_name(0);
    if (n.ok()) method_name = *n;
  }
  Result<MethodMeta> meta = program->method_meta(method_name);
  if (!meta.ok()) return fail("method_meta", meta.error());

  MemoryAllocator method_allocator(sizeof(method_arena), method_arena);
  MemoryAllocator temp_allocator(sizeof(temp_arena), temp_arena);

  /* planned (activation) buffers, carved from the static method arena */
  size_t n_planned = meta->num_memory_planned_buffers();
  Span<uint8_t>* spans = method_allocator.allocateList<Span<uint8_t>>(n_planned ? n_planned : 1);
  size_t planned_total = 0;
  for (size_t i = 0; i < n_planned; ++i) {
    size_t sz = (size_t)meta->memory_planned_buffer_size(i).get();
    uint8_t* buf = (uint8_t*)method_allocator.allocate(sz, 16);
    if (buf == nullptr) {
      std::printf("planned buffer %zu (%zu bytes) does not fit the %u-byte arena\n", i, sz,
                  (unsigned)sizeof(method_arena));
      return fail("planned buffer", Error::MemoryAllocationFailed);
    }
    spans[i] = {buf, sz};
    planned_total += sz;
  }
  HierarchicalAllocator planned_memory({spans, n_planned});
  MemoryManager memory_manager(&method_allocator, &planned_memory, &temp_allocator);

  Result<Method> method = program->load_method(method_name, &memory_manager);
  if (!method.ok()) return fail("load_method", method.error());
  std::printf("method '%s' loaded: %zu planned buffer(s), %zu bytes; method arena used %zu / %zu\n",
              method_name, n_planned, planned_total, (size_t)method_allocator.used_size(),
              (size_t)method_allocator.size());

  e = executorch::bundled_program::load_bundled_input(*method, file, 0);
  if (e != Error::Ok) return fail("load_bundled_input", e);

  uint64_t t0 = bm_mtime();
  e = method->execute();
  uint64_t t1 = bm_mtime();
  if (e != Error::Ok) return fail("execute", e);
  std::printf("execute: %" PRIu64 " us (qemu mtime)\n", (t1 - t0) / 10);

  executorch::bundled_program::ErrorStats st =
      executorch::bundled_program::compute_method_output_error_stats(*method, file, 0);
  if (st.status == Error::Ok)
    std::printf("error stats: mean_abs %g max_abs %g mean_rel %g max_rel %g\n", st.mean_abs_error,
                st.max_abs_error, st.mean_relative_error, st.max_relative_error);

  e = executorch::bundled_program::verify_method_outputs(*method, file, 0, BM_RTOL, BM_ATOL);
  if (e == Error::Ok) {
    std::printf("TEST: BundleIO index[0] Test_result: PASS\n");
    return 0;
  }
  std::printf("verify_method_outputs: 0x%" PRIx32 " (rtol=%g atol=%g)\n", (uint32_t)e, (double)BM_RTOL,
              (double)BM_ATOL);
  std::printf("TEST: BundleIO index[0] Test_result: FAIL\n");
  return 1;
}
