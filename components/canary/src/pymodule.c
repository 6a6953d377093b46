#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "canary.h"

static PyObject *canary_info(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    char line[512];
    canary_result r = canary_run();
    canary_format_json(&r, line, sizeof line);
    return PyUnicode_FromString(line);
}

static PyMethodDef canary_methods[] = {
    {"info", canary_info, METH_NOARGS, "Run the dot product; return the CLI's JSON line."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef canary_module = {
    PyModuleDef_HEAD_INIT, "canary", "crosslane canary extension", -1, canary_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_canary(void) { return PyModule_Create(&canary_module); }
