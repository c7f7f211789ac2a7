/*
 * tad._tad - the CPython binding of the tad C ABI (include/tad.h).
 *
 * Built against the stable ABI (Python >= 3.11), so one shared object loads in Debian's python3.11
 * and in python3.12 on the GPU machine. Only tad.h is used: no C++ header of the library.
 *
 * Long calls run with the GIL released. The library reports progress through a C callback that may
 * run on any thread, so the callback re-acquires the GIL before touching Python objects. An exception
 * raised by the user's progress callable (or a Ctrl-C seen there) cancels the call and is re-raised
 * once the call has returned; it never unwinds through the library.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#include "tad.h"

/* json.dumps / json.loads: reports and snapshot lists are JSON text at the ABI. */
static PyObject *json_dumps;
static PyObject *json_loads;

/* tad.Error and one subclass per status, so callers can catch exactly what they expect. */
static PyObject *error_base;

static struct {
    int status;
    const char *name; /* qualified, for the class's __module__ and repr */
    const char *doc;
    PyObject *type;
} error_classes[] = {
    {TAD_ERR_INVALID_ARGUMENT, "tad.InvalidArgumentError",
     "A NULL handle, a bad option or an unknown name (TAD_ERR_INVALID_ARGUMENT). Also a ValueError.", NULL},
    {TAD_ERR_IO, "tad.FileError", "A file is missing or unreadable, or a disk error (TAD_ERR_IO).", NULL},
    {TAD_ERR_SYNTAX, "tad.ParseError", "The forward file does not parse (TAD_ERR_SYNTAX).", NULL},
    {TAD_ERR_UNSUPPORTED, "tad.UnsupportedError", "A construct tad cannot differentiate yet (TAD_ERR_UNSUPPORTED).",
     NULL},
    {TAD_ERR_NO_KERNEL, "tad.NoKernelError",
     "No @triton.jit kernel, no stub, or a stub launching nothing (TAD_ERR_NO_KERNEL).", NULL},
    {TAD_ERR_WORKER, "tad.WorkerError", "The Python worker failed: import, crash, kernel error, OOM (TAD_ERR_WORKER).",
     NULL},
    {TAD_ERR_TIMEOUT, "tad.WorkerTimeoutError", "The worker did not answer in time and was killed (TAD_ERR_TIMEOUT).",
     NULL},
    {TAD_ERR_MISMATCH, "tad.MismatchError",
     "Verification ran and a gradient disagrees (TAD_ERR_MISMATCH); `.report` holds the report.", NULL},
    {TAD_ERR_NOT_FOUND, "tad.NotFoundError", "Unknown snapshot id (TAD_ERR_NOT_FOUND).", NULL},
    {TAD_ERR_STATE, "tad.StateError", "A call out of order, e.g. verify before generate (TAD_ERR_STATE).", NULL},
    {TAD_ERR_CANCELLED, "tad.CancelledError", "The progress callback asked to stop (TAD_ERR_CANCELLED).", NULL},
    {TAD_ERR_NO_GPU, "tad.NoGPUError", "The GPU path was asked for and no GPU is present (TAD_ERR_NO_GPU).", NULL},
    {TAD_ERR_INTERNAL, "tad.InternalError", "A bug in tad (TAD_ERR_INTERNAL).", NULL},
};
#define N_ERROR_CLASSES (sizeof error_classes / sizeof error_classes[0])

static PyObject *decode(const char *s, const char *errors) {
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), errors);
}

/* Raises the tad.Error subclass for `status`. `report` (may be NULL) is JSON text the call returned
 * along with the failure; it is attached parsed, as `.report`. Returns NULL for convenience. */
static PyObject *raise_status(int status, const char *report) {
    /* Copy the message first: any further tad_ call may overwrite it. */
    PyObject *message = decode(tad_error_last(), "replace");
    PyObject *status_name = decode(tad_status_name(status), "replace");
    PyObject *status_obj = PyLong_FromLong(status);
    PyObject *report_obj = NULL;
    PyObject *exc = NULL;
    PyObject *type = error_base;
    size_t i;

    if (!message || !status_name || !status_obj) goto done;
    if (report) {
        report_obj = PyObject_CallFunction(json_loads, "s", report);
        if (!report_obj) {
            /* A report that is not JSON must not hide the error itself: keep the raw text. */
            PyErr_Clear();
            report_obj = decode(report, "replace");
            if (!report_obj) goto done;
        }
    } else {
        report_obj = Py_NewRef(Py_None);
    }
    for (i = 0; i < N_ERROR_CLASSES; i++)
        if (error_classes[i].status == status) type = error_classes[i].type;
    exc = PyObject_CallFunctionObjArgs(type, message, NULL);
    if (!exc) goto done;
    if (PyObject_SetAttrString(exc, "status", status_obj) < 0 ||
        PyObject_SetAttrString(exc, "status_name", status_name) < 0 ||
        PyObject_SetAttrString(exc, "report", report_obj) < 0)
        goto done;
    PyErr_SetObject(type, exc);
done:
    Py_XDECREF(exc);
    Py_XDECREF(report_obj);
    Py_XDECREF(status_obj);
    Py_XDECREF(status_name);
    Py_XDECREF(message);
    return NULL;
}

/* Text the library returned through `char **out`, as a str; frees it. */
static PyObject *take_string(char *s) {
    PyObject *result = decode(s, "strict");
    tad_string_free(s);
    return result;
}

/* Text the library returned through `char **out`, parsed as JSON; frees it. */
static PyObject *take_json(char *s) {
    PyObject *result = PyObject_CallFunction(json_loads, "s", s);
    tad_string_free(s);
    return result;
}

/* TypeError "<what> must be <expected>, not <type of obj>" (tp_name is not in the limited API). */
static void raise_type_error(const char *what, const char *expected, PyObject *obj) {
    PyObject *name = PyType_GetName(Py_TYPE(obj));
    if (name) {
        PyErr_Format(PyExc_TypeError, "%s must be %s, not %U", what, expected, name);
        Py_DECREF(name);
    }
}

/* `obj` (a str) as UTF-8 owned by `obj`; NUL inside would silently truncate at the C ABI. */
static const char *utf8(PyObject *obj, const char *what) {
    Py_ssize_t size;
    const char *s;
    if (!PyUnicode_Check(obj)) {
        raise_type_error(what, "a str", obj);
        return NULL;
    }
    s = PyUnicode_AsUTF8AndSize(obj, &size);
    if (s && (size_t)size != strlen(s)) {
        PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
        return NULL;
    }
    return s;
}

/* Optional str argument: NULL for None. Returns 0 or -1 with an exception set. */
static int optional_utf8(PyObject *obj, const char *what, const char **out) {
    *out = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    *out = utf8(obj, what);
    return *out ? 0 : -1;
}

/* Optional path (str, bytes or os.PathLike): a new bytes object in *owner, or NULL for None. */
static int optional_path(PyObject *obj, PyObject **owner, const char **out) {
    *owner = NULL;
    *out = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    if (!PyUnicode_FSConverter(obj, owner)) return -1;
    *out = PyBytes_AsString(*owner);
    return *out ? 0 : -1;
}

/* json.dumps(obj) for obj a dict (or a list with `want_list`), or NULL for None; *owner keeps the
 * text. */
static int optional_json(PyObject *obj, int want_list, const char *what, PyObject **owner, const char **out) {
    *owner = NULL;
    *out = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    if (want_list ? !PyList_Check(obj) : !PyDict_Check(obj)) {
        raise_type_error(what, want_list ? "a list, a dict or None" : "a dict or None", obj);
        return -1;
    }
    *owner = PyObject_CallFunctionObjArgs(json_dumps, obj, NULL);
    if (!*owner) return -1;
    *out = utf8(*owner, what);
    return *out ? 0 : -1;
}

/* verify/bench `dims`: a list of dims dicts, or one dict meaning a list of one. */
static int dims_list_json(PyObject *obj, PyObject **owner, const char **out) {
    PyObject *list;
    int rc;
    if (obj != NULL && PyDict_Check(obj)) {
        list = PyList_New(1);
        if (!list) return -1;
        PyList_SetItem(list, 0, Py_NewRef(obj));
        rc = optional_json(list, 1, "dims", owner, out);
        Py_DECREF(list);
        return rc;
    }
    return optional_json(obj, 1, "dims", owner, out);
}

/* verify/bench `dtypes`: None, "float32,float16" or an iterable of dtype names. */
static int dtypes_text(PyObject *obj, PyObject **owner, const char **out) {
    *owner = NULL;
    *out = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    if (PyUnicode_Check(obj)) {
        *owner = Py_NewRef(obj);
    } else {
        PyObject *comma = PyUnicode_FromString(",");
        if (!comma) return -1;
        *owner = PyUnicode_Join(comma, obj); /* TypeError unless an iterable of str */
        Py_DECREF(comma);
        if (!*owner) return -1;
    }
    *out = utf8(*owner, "dtypes");
    return *out ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------------
 * Session
 */

typedef struct {
    PyObject_HEAD tad_session *session; /* NULL once closed */
    PyObject *progress; /* the user's callable, or NULL */
    /* Set while a call is in the library: a session is used by one thread at a time, and the GIL is
     * released during calls, so a second thread (or the progress callable itself) could reach it. */
    int busy;
    /* Set while the session is being freed: progress reported then has nobody to go to. */
    int closing;
    /* The exception raised in the progress callable during the current call, re-raised after. */
    PyObject *exc_type, *exc_value, *exc_tb;
} SessionObject;

static int progress_trampoline(const char *stage, const char *message, double fraction, void *payload) {
    SessionObject *self = payload;
    PyGILState_STATE gil;
    int cancel = 0;

    if (self->closing) return 0;
    gil = PyGILState_Ensure();
    if (self->exc_type) {
        cancel = 1; /* the callable already failed: keep asking the library to stop */
    } else {
        if (self->progress) {
            PyObject *r = PyObject_CallFunction(self->progress, "zzd", stage, message, fraction);
            if (r && r != Py_None) {
                int truth = PyObject_IsTrue(r);
                cancel = truth == 0;
                if (truth < 0) Py_CLEAR(r);
            }
            if (!r) cancel = 1;
            Py_XDECREF(r);
        }
        /* Run Python's signal handlers here, so Ctrl-C cancels a long call at its next progress. */
        if (!PyErr_Occurred() && !cancel) cancel = PyErr_CheckSignals() < 0;
        if (PyErr_Occurred()) PyErr_Fetch(&self->exc_type, &self->exc_value, &self->exc_tb);
    }
    PyGILState_Release(gil);
    return cancel;
}

/* Claims the session for one call; -1 with an exception if it is closed or already in a call. */
static int begin_call(SessionObject *self) {
    if (!self->session) {
        PyErr_SetString(PyExc_ValueError, "the tad session is closed");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the tad session is already in a call (from another thread, or from its "
                        "progress callback)");
        return -1;
    }
    self->busy = 1;
    return 0;
}

/* Ends a call: re-raises the progress callable's exception if there was one, else raises for a
 * failed status. `report` is text returned along with a failure (freed here). Returns 0 on
 * success, -1 with an exception set. */
static int end_call(SessionObject *self, int status, char *report) {
    self->busy = 0;
    if (self->exc_type) {
        PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb);
        self->exc_type = self->exc_value = self->exc_tb = NULL;
        tad_string_free(report);
        return -1;
    }
    if (status != TAD_OK) {
        raise_status(status, report);
        tad_string_free(report);
        return -1;
    }
    return 0;
}

static PyObject *Session_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"work_dir", "python", "device_index", "worker_timeout_s", "startup_timeout_s",
                               "progress", NULL};
    PyObject *work_dir = NULL, *python = NULL, *progress = NULL;
    PyObject *work_dir_bytes = NULL, *python_bytes = NULL;
    tad_session_options opts = TAD_SESSION_OPTIONS_INIT;
    SessionObject *self = NULL;
    allocfunc alloc;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOiddO:Session", keywords, &work_dir, &python, &opts.device_index,
                                     &opts.worker_timeout_s, &opts.startup_timeout_s, &progress))
        return NULL;
    if (opts.device_index < 0) {
        PyErr_SetString(PyExc_ValueError, "device_index must be >= 0");
        return NULL;
    }
    if (!(opts.worker_timeout_s >= 0 && isfinite(opts.worker_timeout_s))) {
        PyErr_SetString(PyExc_ValueError, "worker_timeout_s must be a finite number >= 0 (0: default)");
        return NULL;
    }
    if (!(opts.startup_timeout_s >= 0 && isfinite(opts.startup_timeout_s))) {
        PyErr_SetString(PyExc_ValueError, "startup_timeout_s must be a finite number >= 0 (0: default)");
        return NULL;
    }
    if (progress == Py_None) progress = NULL;
    if (progress && !PyCallable_Check(progress)) {
        raise_type_error("progress", "callable or None", progress);
        return NULL;
    }
    if (optional_path(work_dir, &work_dir_bytes, &opts.work_dir) < 0 ||
        optional_path(python, &python_bytes, &opts.python) < 0)
        goto fail;

    alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    self = (SessionObject *)alloc(type, 0);
    if (!self) goto fail;
    self->progress = Py_XNewRef(progress);
    /* Always installed, even without a callable: it is also where Ctrl-C is noticed. */
    opts.progress = progress_trampoline;
    opts.progress_payload = self;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS status = tad_session_new(&opts, &self->session);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) goto fail;
    Py_XDECREF(work_dir_bytes);
    Py_XDECREF(python_bytes);
    return (PyObject *)self;
fail:
    Py_XDECREF(work_dir_bytes);
    Py_XDECREF(python_bytes);
    Py_XDECREF((PyObject *)self);
    return NULL;
}

static void close_session(SessionObject *self) {
    tad_session *session = self->session;
    self->session = NULL;
    self->closing = 1;
    tad_session_free(session);
}

static int Session_traverse(SessionObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE((PyObject *)self)); /* heap types are referenced by their instances */
    Py_VISIT(self->progress);
    Py_VISIT(self->exc_type);
    Py_VISIT(self->exc_value);
    Py_VISIT(self->exc_tb);
    return 0;
}

static int Session_clear(SessionObject *self) {
    Py_CLEAR(self->progress);
    Py_CLEAR(self->exc_type);
    Py_CLEAR(self->exc_value);
    Py_CLEAR(self->exc_tb);
    return 0;
}

static void Session_dealloc(SessionObject *self) {
    PyTypeObject *type = Py_TYPE((PyObject *)self);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    PyObject_GC_UnTrack(self);
    close_session(self);
    Session_clear(self);
    tp_free(self);
    Py_DECREF(type);
}

static PyObject *Session_close(SessionObject *self, PyObject *unused) {
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the tad session is in a call and cannot be closed");
        return NULL;
    }
    if (self->session) {
        tad_session *session = self->session;
        self->session = NULL;
        self->closing = 1;
        /* Freeing stops the worker process, which may take a moment. */
        Py_BEGIN_ALLOW_THREADS tad_session_free(session);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyObject *Session_enter(SessionObject *self, PyObject *unused) {
    (void)unused;
    if (!self->session) {
        PyErr_SetString(PyExc_ValueError, "the tad session is closed");
        return NULL;
    }
    return Py_NewRef((PyObject *)self);
}

static PyObject *Session_exit(SessionObject *self, PyObject *args) {
    (void)args;
    PyObject *r = Session_close(self, NULL);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *Session_load_forward(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"path", "source", NULL};
    PyObject *source = Py_None, *path_bytes = NULL;
    const char *path_c, *source_c;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|O:load_forward", keywords, PyUnicode_FSConverter, &path_bytes,
                                     &source))
        return NULL;
    path_c = PyBytes_AsString(path_bytes);
    if (!path_c || optional_utf8(source, "source", &source_c) < 0 || begin_call(self) < 0) goto fail;
    Py_BEGIN_ALLOW_THREADS status = tad_load_forward(self->session, path_c, source_c);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) goto fail;
    Py_DECREF(path_bytes);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(path_bytes);
    return NULL;
}

/* The LLM optimizer's options (backend "llm", tad_generate_options version 3), keyword-only. */
static PyObject *Session_generate(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"dims",
                               "launch",
                               "backend",
                               "loops",
                               "provider",
                               "model",
                               "base_url",
                               "api_key_env",
                               "max_iterations",
                               "parallel",
                               "temperature",
                               "reasoning_effort",
                               "wall_clock_s",
                               "max_tokens",
                               "max_cost_usd",
                               "usd_per_mtok_input",
                               "usd_per_mtok_output",
                               "max_output_tokens",
                               "request_timeout_s",
                               "max_retries",
                               "topk",
                               NULL};
    PyObject *dims = Py_None, *launch = Py_None, *backend = Py_None, *loops = Py_None;
    PyObject *provider = Py_None, *model = Py_None, *base_url = Py_None, *key_env = Py_None, *effort = Py_None;
    PyObject *dims_text = NULL, *launch_text = NULL, *result = NULL;
    tad_generate_options opts = TAD_GENERATE_OPTIONS_INIT;
    char *id = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOO$OOOOiidOdLdddLdii:generate", keywords, &dims, &launch,
                                     &backend, &loops, &provider, &model, &base_url, &key_env, &opts.max_iterations,
                                     &opts.parallel, &opts.temperature, &effort, &opts.wall_clock_s, &opts.max_tokens,
                                     &opts.max_cost_usd, &opts.usd_per_mtok_input, &opts.usd_per_mtok_output,
                                     &opts.max_output_tokens, &opts.request_timeout_s, &opts.max_retries, &opts.topk))
        return NULL;
    if (optional_json(dims, 0, "dims", &dims_text, &opts.dims_json) < 0 ||
        optional_json(launch, 0, "launch", &launch_text, &opts.launch_json) < 0 ||
        optional_utf8(backend, "backend", &opts.backend) < 0 || optional_utf8(loops, "loops", &opts.loops) < 0 ||
        optional_utf8(provider, "provider", &opts.provider) < 0 || optional_utf8(model, "model", &opts.model) < 0 ||
        optional_utf8(base_url, "base_url", &opts.base_url) < 0 ||
        optional_utf8(key_env, "api_key_env", &opts.api_key_env) < 0 ||
        optional_utf8(effort, "reasoning_effort", &opts.reasoning_effort) < 0 || begin_call(self) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS status = tad_generate(self->session, &opts, &id);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) == 0) result = take_string(id);
done:
    Py_XDECREF(dims_text);
    Py_XDECREF(launch_text);
    return result;
}

static PyObject *Session_optimize_report(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"format", NULL};
    PyObject *format = Py_None;
    const char *format_c;
    char *report = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:optimize_report", keywords, &format) ||
        optional_utf8(format, "format", &format_c) < 0 || begin_call(self) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS status = tad_optimize_report(self->session, format_c, &report);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) return NULL;
    return take_string(report);
}

static PyObject *Session_candidate_source(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"id", NULL};
    PyObject *id = Py_None;
    const char *id_c;
    char *source = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:candidate_source", keywords, &id) ||
        optional_utf8(id, "id", &id_c) < 0 || begin_call(self) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS status = tad_candidate_source(self->session, id_c, &source);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) return NULL;
    return take_string(source);
}

static PyObject *Session_verify(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"cpu", "dims", "dtypes", "max_elements", "seed", NULL};
    PyObject *dims = Py_None, *dtypes = Py_None, *dims_text = NULL, *dtypes_owner = NULL;
    PyObject *result = NULL;
    tad_verify_options opts = TAD_VERIFY_OPTIONS_INIT;
    long long seed = 0;
    char *report = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pOOLL:verify", keywords, &opts.cpu, &dims, &dtypes,
                                     &opts.max_elements, &seed))
        return NULL;
    if (opts.max_elements < 0) {
        PyErr_SetString(PyExc_ValueError, "max_elements must be >= 0 (0: default)");
        return NULL;
    }
    if (seed < 0 || seed > (long long)0xFFFFFFFFu) {
        PyErr_SetString(PyExc_ValueError, "seed must be in [0, 2**32)");
        return NULL;
    }
    opts.seed = (unsigned int)seed;
    if (dims_list_json(dims, &dims_text, &opts.dims_json) < 0 || dtypes_text(dtypes, &dtypes_owner, &opts.dtypes) < 0 ||
        begin_call(self) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS status = tad_verify(self->session, &opts, &report);
    Py_END_ALLOW_THREADS if (end_call(self, status, report) == 0) result = take_json(report);
done:
    Py_XDECREF(dims_text);
    Py_XDECREF(dtypes_owner);
    return result;
}

static PyObject *Session_bench(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"dims", "dtypes", "reps", NULL};
    PyObject *dims = Py_None, *dtypes = Py_None, *dims_text = NULL, *dtypes_owner = NULL;
    PyObject *result = NULL;
    tad_bench_options opts = TAD_BENCH_OPTIONS_INIT;
    char *report = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOi:bench", keywords, &dims, &dtypes, &opts.reps)) return NULL;
    if (opts.reps < 0) {
        PyErr_SetString(PyExc_ValueError, "reps must be >= 0 (0: default)");
        return NULL;
    }
    if (dims_list_json(dims, &dims_text, &opts.dims_json) < 0 || dtypes_text(dtypes, &dtypes_owner, &opts.dtypes) < 0 ||
        begin_call(self) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS status = tad_bench(self->session, &opts, &report);
    Py_END_ALLOW_THREADS if (end_call(self, status, report) == 0) result = take_json(report);
done:
    Py_XDECREF(dims_text);
    Py_XDECREF(dtypes_owner);
    return result;
}

static PyObject *Session_snapshot(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"label", NULL};
    PyObject *label = Py_None;
    const char *label_c;
    char *id = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:snapshot", keywords, &label) ||
        optional_utf8(label, "label", &label_c) < 0 || begin_call(self) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS status = tad_snapshot(self->session, label_c, &id);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) return NULL;
    return take_string(id);
}

static PyObject *Session_rollback(SessionObject *self, PyObject *id) {
    const char *id_c = utf8(id, "id");
    int status;

    if (!id_c || begin_call(self) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS status = tad_rollback(self->session, id_c);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Session_snapshots(SessionObject *self, PyObject *unused) {
    char *list = NULL;
    int status;

    (void)unused;
    if (begin_call(self) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS status = tad_snapshot_list(self->session, &list);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) < 0) return NULL;
    return take_json(list);
}

/* `exclude` (None, a str, or an iterable of str) as one str of lines in *owner (NULL for None). */
static int exclude_lines(PyObject *exclude, PyObject **owner, const char **out) {
    PyObject *sep, *items;
    *owner = NULL;
    *out = NULL;
    if (exclude == Py_None) return 0;
    if (PyUnicode_Check(exclude)) {
        Py_INCREF(exclude);
        *owner = exclude;
    } else {
        if (!(items = PySequence_List(exclude))) return -1;
        if (!(sep = PyUnicode_FromString("\n"))) {
            Py_DECREF(items);
            return -1;
        }
        *owner = PyUnicode_Join(sep, items);
        Py_DECREF(sep);
        Py_DECREF(items);
        if (!*owner) return -1;
    }
    *out = utf8(*owner, "exclude");
    return *out ? 0 : -1;
}

/* The retrieval options of retrieve() / dataset_list(); the strings are owned by the arguments. */
static int retrieve_options(PyObject *exclude, PyObject *dataset, PyObject *cache, PyObject **exclude_owner,
                            PyObject **dataset_owner, PyObject **cache_owner, tad_retrieve_options *opts) {
    if (exclude_lines(exclude, exclude_owner, &opts->exclude) < 0) return -1;
    if (optional_path(dataset, dataset_owner, &opts->dataset_dir) < 0) return -1;
    return optional_path(cache, cache_owner, &opts->cache_dir);
}

static PyObject *Session_retrieve(SessionObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"topk", "min_sim", "exclude", "dataset", "cache", NULL};
    PyObject *exclude = Py_None, *dataset = Py_None, *cache = Py_None;
    PyObject *exclude_owner = NULL, *dataset_owner = NULL, *cache_owner = NULL, *result = NULL;
    tad_retrieve_options opts = TAD_RETRIEVE_OPTIONS_INIT;
    char *report = NULL;
    int status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|idOOO:retrieve", keywords, &opts.topk, &opts.min_sim, &exclude,
                                     &dataset, &cache))
        return NULL;
    if (retrieve_options(exclude, dataset, cache, &exclude_owner, &dataset_owner, &cache_owner, &opts) < 0 ||
        begin_call(self) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS status = tad_retrieve(self->session, &opts, &report);
    Py_END_ALLOW_THREADS if (end_call(self, status, NULL) == 0) result = take_json(report);
done:
    Py_XDECREF(exclude_owner);
    Py_XDECREF(dataset_owner);
    Py_XDECREF(cache_owner);
    return result;
}

static PyMethodDef Session_methods[] = {
    {"load_forward", (PyCFunction)(void (*)(void))Session_load_forward, METH_VARARGS | METH_KEYWORDS,
     "load_forward(path, source=None)\n\nLoads the forward file (parsed; kernels and stub found). "
     "With `source`, that text is the file and `path` names it."},
    {"generate", (PyCFunction)(void (*)(void))Session_generate, METH_VARARGS | METH_KEYWORDS,
     "generate(dims=None, launch=None, backend='ad', loops='auto') -> snapshot id\n\nGenerates a "
     "backward. `dims` (dict) picks the dims to trace with (default: the first SWEEP entry); `launch` "
     "(dict) is a trace record used instead of running the worker; `loops` ('recompute', 'tape' or 'auto') "
     "says how loops with nonlinear carried state are reversed. backend='llm' runs the LLM optimizer "
     "(docs/llm.md) with the keyword-only options provider, model, base_url, api_key_env, "
     "max_iterations, parallel, temperature, reasoning_effort, wall_clock_s, max_tokens, max_cost_usd, "
     "usd_per_mtok_input, usd_per_mtok_output, max_output_tokens, request_timeout_s, max_retries, topk "
     "(tad_generate_options version 3; 0 or None: the default) and returns the best snapshot's id."},
    {"optimize_report", (PyCFunction)(void (*)(void))Session_optimize_report, METH_VARARGS | METH_KEYWORDS,
     "optimize_report(format='markdown') -> str\n\nThe report of the last generate(backend='llm'): "
     "'markdown' or 'json' (text; docs/reports.md). tad.StateError before any."},
    {"candidate_source", (PyCFunction)(void (*)(void))Session_candidate_source, METH_VARARGS | METH_KEYWORDS,
     "candidate_source(id=None) -> str\n\nThe generated Python of snapshot `id` (default: the "
     "current candidate)."},
    {"verify", (PyCFunction)(void (*)(void))Session_verify, METH_VARARGS | METH_KEYWORDS,
     "verify(cpu=False, dims=None, dtypes=None, max_elements=0, seed=0) -> dict\n\nVerifies the "
     "current candidate and returns the report. A disagreeing gradient raises tad.MismatchError "
     "with the report as `.report`. `dims`: a list of dims dicts (or one dict); `dtypes`: a str "
     "'float32,float16' or a list of names."},
    {"bench", (PyCFunction)(void (*)(void))Session_bench, METH_VARARGS | METH_KEYWORDS,
     "bench(dims=None, dtypes=None, reps=0) -> dict\n\nBenchmarks the current candidate on the "
     "GPU and returns the report."},
    {"snapshot", (PyCFunction)(void (*)(void))Session_snapshot, METH_VARARGS | METH_KEYWORDS,
     "snapshot(label=None) -> id\n\nStores the current candidate as a new snapshot."},
    {"rollback", (PyCFunction)Session_rollback, METH_O,
     "rollback(id)\n\nMakes snapshot `id` the current candidate again."},
    {"retrieve", (PyCFunction)(void (*)(void))Session_retrieve, METH_VARARGS | METH_KEYWORDS,
     "retrieve(topk=0, min_sim=0.0, exclude=None, dataset=None, cache=None) -> dict\n\nThe dataset "
     "entries (forward/backward pairs) closest to the loaded forward, best first (docs/retrieval.md). "
     "`exclude`: path substrings (a str or a list); `dataset`, `cache`: directories (default: tad's "
     "dataset and its cache). Zero topk means 4."},
    {"snapshots", (PyCFunction)Session_snapshots, METH_NOARGS,
     "snapshots() -> list\n\nThe session's snapshots (dicts), oldest first."},
    {"close", (PyCFunction)Session_close, METH_NOARGS,
     "close()\n\nFrees the session and stops its worker. Further calls raise ValueError."},
    {"__enter__", (PyCFunction)Session_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Session_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Session_slots[] = {
    {Py_tp_new, Session_new},
    {Py_tp_dealloc, Session_dealloc},
    {Py_tp_traverse, Session_traverse},
    {Py_tp_clear, Session_clear},
    {Py_tp_methods, Session_methods},
    {Py_tp_doc,
     "Session(*, work_dir=None, python=None, device_index=0, worker_timeout_s=0, "
     "startup_timeout_s=0, progress=None)\n\n"
     "A tad session: one forward file, its candidates and their reports, kept in `work_dir` "
     "(default ./.tad). `python` is the worker interpreter (default $TAD_PYTHON, else python3). "
     "`progress(stage, message, fraction)` is called during long steps; returning False cancels "
     "(tad.CancelledError), and an exception it raises cancels and is re-raised. Zero timeouts "
     "mean the library's defaults."},
    {0, NULL},
};

static PyType_Spec Session_spec = {
    "tad.Session", sizeof(SessionObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, Session_slots,
};

/* ------------------------------------------------------------------------------------------------
 * Module
 */

static PyObject *version(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyUnicode_FromString(tad_version());
}

static PyObject *dataset_list(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"dataset", "cache", NULL};
    PyObject *dataset = Py_None, *cache = Py_None, *dataset_owner = NULL, *cache_owner = NULL, *exclude_owner = NULL;
    PyObject *result = NULL;
    tad_retrieve_options opts = TAD_RETRIEVE_OPTIONS_INIT;
    char *list = NULL;
    int status;

    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:dataset_list", keywords, &dataset, &cache)) return NULL;
    if (retrieve_options(Py_None, dataset, cache, &exclude_owner, &dataset_owner, &cache_owner, &opts) == 0) {
        Py_BEGIN_ALLOW_THREADS status = tad_dataset_list(&opts, &list);
        Py_END_ALLOW_THREADS if (status == TAD_OK) result = take_json(list);
        else raise_status(status, NULL);
    }
    Py_XDECREF(dataset_owner);
    Py_XDECREF(cache_owner);
    return result;
}

static PyMethodDef module_methods[] = {
    {"version", version, METH_NOARGS, "version() -> 'MAJOR.MINOR.PATCH' of the loaded libtad."},
    {"dataset_list", (PyCFunction)(void (*)(void))dataset_list, METH_VARARGS | METH_KEYWORDS,
     "dataset_list(dataset=None, cache=None) -> dict\n\nEvery entry of the dataset with its metadata, "
     "backward and feature counts (docs/reports.md, \"Dataset listing\")."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "tad._tad",
    "The C binding of libtad (include/tad.h); use the `tad` package rather than this module.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

/* A libtad of another major version (of another minor version while the major is 0: docs/abi.md)
 * has another ABI: refuse it rather than misread its structs. */
static int check_library_version(void) {
    char expected[32];
    size_t n = (size_t)(TAD_VERSION_MAJOR == 0 ? PyOS_snprintf(expected, sizeof expected, "0.%d.", TAD_VERSION_MINOR)
                                               : PyOS_snprintf(expected, sizeof expected, "%d.", TAD_VERSION_MAJOR));
    if (strncmp(tad_version(), expected, n) != 0) {
        PyErr_Format(PyExc_ImportError, "tad._tad was built for libtad %sx but loaded libtad %s", expected,
                     tad_version());
        return -1;
    }
    return 0;
}

static int add_error_classes(PyObject *module) {
    PyObject *dict;
    size_t i;
    dict = Py_BuildValue("{sO}", "report", Py_None);
    if (!dict) return -1;
    error_base = PyErr_NewExceptionWithDoc(
        "tad.Error",
        "A tad library call failed. `status` is the tad_status code, `status_name` its name (e.g. "
        "'TAD_ERR_SYNTAX'), `report` the parsed report returned with the failure, or None.",
        PyExc_RuntimeError, dict);
    Py_DECREF(dict);
    if (!error_base || PyModule_AddObjectRef(module, "Error", error_base) < 0) return -1;
    for (i = 0; i < N_ERROR_CLASSES; i++) {
        PyObject *bases = error_classes[i].status == TAD_ERR_INVALID_ARGUMENT
                              ? PyTuple_Pack(2, error_base, PyExc_ValueError)
                              : PyTuple_Pack(1, error_base);
        if (!bases) return -1;
        /* Class attributes `status` and `status_name`, so Python code can raise these too. */
        dict = Py_BuildValue("{sisssO}", "status", error_classes[i].status, "status_name",
                             tad_status_name(error_classes[i].status), "report", Py_None);
        if (!dict) {
            Py_DECREF(bases);
            return -1;
        }
        error_classes[i].type = PyErr_NewExceptionWithDoc(error_classes[i].name, error_classes[i].doc, bases, dict);
        Py_DECREF(bases);
        Py_DECREF(dict);
        if (!error_classes[i].type ||
            PyModule_AddObjectRef(module, strchr(error_classes[i].name, '.') + 1, error_classes[i].type) < 0)
            return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__tad(void) {
    PyObject *module = NULL, *json = NULL, *session_type = NULL;

    if (check_library_version() < 0) return NULL;
    module = PyModule_Create(&module_def);
    if (!module) return NULL;
    json = PyImport_ImportModule("json");
    if (!json) goto fail;
    json_dumps = PyObject_GetAttrString(json, "dumps");
    json_loads = PyObject_GetAttrString(json, "loads");
    Py_DECREF(json);
    if (!json_dumps || !json_loads || add_error_classes(module) < 0) goto fail;
    session_type = PyType_FromSpec(&Session_spec);
    if (!session_type || PyModule_AddObjectRef(module, "Session", session_type) < 0) goto fail;
    Py_DECREF(session_type);
    return module;
fail:
    Py_XDECREF(session_type);
    Py_DECREF(module);
    return NULL;
}
