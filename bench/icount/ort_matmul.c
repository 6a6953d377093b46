/*
 * Runs an ONNX model of one MatMul (input "x", output "y") RUNS times through ONNX Runtime's C API on one
 * thread, for bench_ort_rvv.py: the instructions of RUNS=3 minus those of RUNS=1, halved, are one MatMul's work
 * (session creation and start-up cancel out).
 *
 *   ort_matmul MODEL ROWS COLUMNS RUNS    prints "ort_matmul: OK checksum=<sum of y>"
 */
#include <stdio.h>
#include <stdlib.h>

#include <onnxruntime_c_api.h>

static const OrtApi *api;

static void check(OrtStatus *status)
{
    if (status != NULL) {
        fprintf(stderr, "ort_matmul: %s\n", api->GetErrorMessage(status));
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: ort_matmul MODEL ROWS COLUMNS RUNS\n");
        return 2;
    }
    long rows = atol(argv[2]), columns = atol(argv[3]), runs = atol(argv[4]);
    api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    OrtEnv *env;
    OrtSessionOptions *options;
    OrtSession *session;
    check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "bench", &env));
    check(api->CreateSessionOptions(&options));
    check(api->SetIntraOpNumThreads(options, 1));
    check(api->SetInterOpNumThreads(options, 1));
    check(api->CreateSession(env, argv[1], options, &session));

    size_t count = (size_t)(rows * columns);
    float *x = malloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++)
        x[i] = (float)((i * 7919u) % 1000u) / 1000.0f - 0.5f;
    int64_t shape[2] = {rows, columns};
    OrtMemoryInfo *memory;
    OrtValue *input = NULL;
    check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memory));
    check(api->CreateTensorWithDataAsOrtValue(memory, x, count * sizeof(float), shape, 2,
                                              ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &input));
    const char *inputs[] = {"x"}, *outputs[] = {"y"};
    double checksum = 0;
    for (long run = 0; run < runs; run++) {
        OrtValue *output = NULL;
        check(api->Run(session, NULL, inputs, (const OrtValue *const *)&input, 1, outputs, 1, &output));
        float *y;
        OrtTensorTypeAndShapeInfo *info;
        size_t produced;
        check(api->GetTensorMutableData(output, (void **)&y));
        check(api->GetTensorTypeAndShape(output, &info));
        check(api->GetTensorShapeElementCount(info, &produced));
        api->ReleaseTensorTypeAndShapeInfo(info);
        checksum = 0;
        for (size_t i = 0; i < produced; i++)
            checksum += y[i];
        api->ReleaseValue(output);
    }
    printf("ort_matmul: OK checksum=%.6g\n", checksum);
    api->ReleaseValue(input);
    api->ReleaseMemoryInfo(memory);
    api->ReleaseSession(session);
    api->ReleaseSessionOptions(options);
    api->ReleaseEnv(env);
    free(x);
    return 0;
}
