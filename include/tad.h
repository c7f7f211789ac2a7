/*
 * tad.h - C ABI of tad (Triton AutoDiff), version 2 (docs/abi.md: what changed between versions).
 *
 * tad reads a Python file holding @triton.jit forward kernel(s) and a stub that launches them,
 * generates a backward (Triton kernels, launcher, torch.autograd.Function), verifies it (on the CPU
 * interpreter or on a GPU through a Python worker process) and benchmarks it.
 *
 * Conventions
 *  - Every function returns an int status: TAD_OK (0) or a negative tad_status. The message of the
 *    last failure on the calling thread comes from tad_error_last(), which never returns NULL.
 *    A NULL session or out pointer is TAD_ERR_INVALID_ARGUMENT, "<function>: <argument> is NULL".
 *  - On failure every `char **out` is set to NULL (except the report of a failed tad_verify).
 *  - On failure a session is left as it was before the call.
 *  - Strings returned through `char **out` belong to the caller: release them with tad_string_free().
 *  - Options structs start with `unsigned int version`; initialise them with the *_INIT macro or with
 *    tad_*_options_init(&opts, TAD_*_OPTIONS_VERSION). Zero / NULL fields mean "default". The version
 *    tells the library which fields the caller's struct has: it reads and writes only those, so a
 *    caller built against an older header keeps working with a newer library. A version the library
 *    does not know (0, or newer than the library) is TAD_ERR_INVALID_ARGUMENT.
 *  - A session is used by one thread at a time; distinct sessions are independent.
 *  - Reports are JSON text; docs/reports.md documents their schemas.
 */
#ifndef TAD_H
#define TAD_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TAD_API __declspec(dllexport)
#elif defined(__GNUC__)
#define TAD_API __attribute__((visibility("default")))
#else
#define TAD_API
#endif

#define TAD_VERSION_MAJOR 0
#define TAD_VERSION_MINOR 2
#define TAD_VERSION_PATCH 0

typedef enum tad_status {
    TAD_OK = 0,
    TAD_ERR_INVALID_ARGUMENT = -1, /* NULL handle, bad option, unknown name */
    TAD_ERR_IO = -2, /* file missing or unreadable, disk error */
    TAD_ERR_SYNTAX = -3, /* the forward file does not parse */
    TAD_ERR_UNSUPPORTED = -4, /* a construct tad cannot differentiate (yet) */
    TAD_ERR_NO_KERNEL = -5, /* no @triton.jit kernel, no stub, or a stub launching nothing */
    TAD_ERR_WORKER = -6, /* the Python worker failed: import, crash, kernel error, OOM */
    TAD_ERR_TIMEOUT = -7, /* the worker did not answer in time and was killed */
    TAD_ERR_MISMATCH = -8, /* verification ran and a gradient disagrees */
    TAD_ERR_NOT_FOUND = -9, /* unknown snapshot id */
    TAD_ERR_STATE = -10, /* call out of order, e.g. verify before generate */
    TAD_ERR_CANCELLED = -11, /* the progress callback asked to stop */
    TAD_ERR_NO_GPU = -12, /* the GPU path was asked for and no GPU is present */
    TAD_ERR_INTERNAL = -99
} tad_status;

/* "MAJOR.MINOR.PATCH" of the library, which may be newer than this header. Static storage. */
TAD_API const char *tad_version(void);

/* Message of the last failure on this thread; "" if no call has failed on it yet. Never NULL. As in
 * libgit2, a successful call does not clear it: test the status first, then read the message. The
 * pointer stays valid until the next failing tad_ call on this thread. */
TAD_API const char *tad_error_last(void);

/* Name of a status code, e.g. "TAD_ERR_SYNTAX"; "TAD_UNKNOWN_STATUS" for a code not listed above.
 * Static storage; never NULL. */
TAD_API const char *tad_status_name(int status);

/* Frees a string returned through `char **out`; NULL is a no-op. */
TAD_API void tad_string_free(char *s);

typedef struct tad_session tad_session;

/* Progress of a long step. `stage` is e.g. "trace", "generate", "verify", "bench"; `fraction` is in
 * [0, 1] or negative when unknown. Return non-zero to cancel the step (it fails with
 * TAD_ERR_CANCELLED). */
typedef int (*tad_progress_fn)(const char *stage, const char *message, double fraction, void *payload);

#define TAD_SESSION_OPTIONS_VERSION 2
typedef struct tad_session_options {
    unsigned int version;
    const char *work_dir; /* session directory; NULL: "./.tad" */
    const char *python; /* worker interpreter; NULL: $TAD_PYTHON, else "python3" */
    int device_index; /* CUDA device used by the worker */
    double worker_timeout_s; /* limit for one worker request; 0: 600 */
    double startup_timeout_s; /* limit for the worker to import torch/triton; 0: 120 */
    tad_progress_fn progress; /* may be NULL */
    void *progress_payload;
    /* Since version 2. The worker's host memory in MiB (RLIMIT_DATA: its heap and private writable
     * mappings; GPU memory is not limited); 0: no limit. An allocation past it fails in the worker:
     * an error of kind oom, or a skipped case for a SWEEP entry with "required": False. */
    long long worker_memory_mb;
} tad_session_options;
#define TAD_SESSION_OPTIONS_INIT \
    { TAD_SESSION_OPTIONS_VERSION, 0, 0, 0, 0.0, 0.0, 0, 0, 0 }
/* Sets the fields that `version` of the struct defines to their defaults and opts->version to
 * `version`; bytes past those fields are not touched. Pass the version of the header the caller was
 * built with (TAD_SESSION_OPTIONS_VERSION): a caller built against an older header passes its older
 * version and its smaller struct. Version 0 or one newer than the library's:
 * TAD_ERR_INVALID_ARGUMENT, "<function>: unsupported options version <version> (libtad <library
 * version> knows version 1)" ("versions 1 to N" where there are several), and *opts is left
 * untouched. The same holds for every tad_*_options_init below. */
TAD_API int tad_session_options_init(tad_session_options *opts, unsigned int version);

/* Opens (creating if needed) the session directory. An existing directory keeps its snapshots. */
TAD_API int tad_session_new(const tad_session_options *opts, tad_session **out);
TAD_API void tad_session_free(tad_session *session);

/* SIGKILL to every worker process (with what it started) that this process's sessions are running,
 * without waiting for them. Async-signal-safe: for a host's SIGINT/SIGTERM/SIGHUP handler that then
 * ends the process, as the `tad` program's does. Sessions used afterwards report their worker as
 * exited and start a new one. (Without it a host that dies of a signal still takes its workers
 * along on Linux, and exit() kills them too; see docs/worker-protocol.md, "Lifetime".) */
TAD_API void tad_kill_workers(void);

/* Loads the forward file. `source` NULL: read `path`. Otherwise `source` is the file's text and
 * `path` names it in diagnostics and is where the worker imports it from (the text is written to the
 * session directory when `path` does not exist). Parses it and finds the kernels and the stub.
 * A path that is not a regular file (a FIFO, /dev/zero) is refused at once, and a file or source of
 * more than TAD_MAX_FORWARD_BYTES: TAD_ERR_IO "<path>: cannot read file: ..." (docs/security.md). */
#define TAD_MAX_FORWARD_BYTES (16u << 20)
TAD_API int tad_load_forward(tad_session *session, const char *path, const char *source);

#define TAD_GENERATE_OPTIONS_VERSION 3
typedef struct tad_generate_options {
    unsigned int version;
    const char *backend; /* NULL or "ad": the compiler's reverse mode; "llm": the compiler's backward,
                            then a model's attempts to make it faster, each verified and timed before
                            it may become current (version 3's fields; docs/llm.md) */
    const char *dims_json; /* dims to trace the stub with, e.g. {"M":4,"N":64}, NULL: the SWEEP; a list
                                of dims: traced with the first, and the others for the backwards of
                                constexpr values they specialize differently (as the SWEEP is) */
    const char *launch_json; /* a trace record (docs/reports.md) to use instead of running the worker */
    /* Since version 2. How loops whose carried float state is nonlinear (recurrences, online softmax)
     * are reversed: "recompute" (rerun the loop up to each iteration: O(T^2) work, no memory) or
     * "tape" (store the state per iteration in scratch memory: O(T) work, trips x state floats per
     * program) or NULL or "auto" (recompute, then the tape for each loop whose rerun the backward
     * still needs and whose trip count the host computes from the launch's integer arguments).
     * docs/compiler.md has the details. Version 2 and 3 callers got "recompute" for NULL until
     * 2026-12; NULL is "auto" now. */
    const char *loops;
    /* Since version 3: the LLM optimizer, backend "llm" (docs/llm.md); backend "ad" ignores these.
     * The API key is read from the environment variable named here, never from this struct, and is
     * never logged. */
    const char *provider; /* "openai" (OpenAI-compatible chat completions, any base_url) or
                             "anthropic" (Messages); NULL: "openai" */
    const char *model; /* required with backend "llm" */
    const char *base_url; /* NULL: https://api.openai.com/v1 or https://api.anthropic.com */
    const char *api_key_env; /* NULL: "OPENAI_API_KEY" or "ANTHROPIC_API_KEY" */
    int max_iterations; /* rounds of requests after the compiler's baseline; 0: 4 */
    int parallel; /* requests per round, sent at once (at most 16); 0: 1 */
    double temperature; /* up to 2; 0: the provider's default (not sent) */
    const char *reasoning_effort; /* NULL: none; "low", "medium" or "high" */
    double wall_clock_s; /* the whole optimization, checked between steps; 0: 1800 */
    long long max_tokens; /* token budget, input + output over all requests; 0: no limit */
    double max_cost_usd; /* cost budget in USD; 0: no limit (needs the two prices) */
    double usd_per_mtok_input; /* prices per million tokens, for the cost budget and the report */
    double usd_per_mtok_output;
    long long max_output_tokens; /* limit of one reply; 0: 16384 */
    double request_timeout_s; /* one attempt of one request; 0: 300 */
    int max_retries; /* attempts after the first on 408/409/429/5xx and network errors; 0: 4;
                        negative: none */
    int topk; /* retrieved (forward, backward) pairs in the prompt; 0: 4; negative: none */
} tad_generate_options;
#define TAD_GENERATE_OPTIONS_INIT \
    { TAD_GENERATE_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0, 0.0, 0, 0.0, 0.0, 0.0, 0, 0.0, 0, 0 }
TAD_API int tad_generate_options_init(tad_generate_options *opts, unsigned int version);

/* Generates a backward for the loaded forward. The candidate becomes the current one and is stored as
 * a snapshot; its id is returned through `out_id` (may be NULL). With backend "llm" every candidate is
 * a snapshot and the best one is current on return (its id returned); the run's report is then
 * available from tad_optimize_report. It fails, leaving the current candidate as it was, on invalid
 * options (an unset key variable among them), on cancellation, and with TAD_ERR_UNSUPPORTED when the
 * compiler refuses the kernel and no model candidate passes verification. Without a GPU, candidates
 * are verified on the CPU interpreter and none is claimed faster (docs/llm.md). */
TAD_API int tad_generate(tad_session *session, const tad_generate_options *opts, char **out_id);

/* The report of the session's last tad_generate with backend "llm": `format` NULL or "markdown" (a
 * table of every candidate with its verdict and timing) or "json" (docs/reports.md, "Optimize
 * report"). TAD_ERR_STATE before any such call. A call that failed after its options were accepted
 * (cancelled, or nothing verified) leaves its report too. */
TAD_API int tad_optimize_report(tad_session *session, const char *format, char **out_report);

/* The generated Python source of a snapshot (NULL id: the current candidate). */
TAD_API int tad_candidate_source(tad_session *session, const char *id, char **out_source);

/* How the backward of a snapshot (NULL id: the current candidate) writes each gradient, as text: per
 * launch, per differentiated pointer, the access analysis's class (disjoint, reduced over grid axes,
 * reduced over a loop and grid axes, reduced over a loop, data-dependent scatter, unproven) and its
 * run-time conditions; docs/compiler.md, "Access analysis". Empty for a snapshot stored without one
 * (by an older libtad). */
TAD_API int tad_candidate_explain(tad_session *session, const char *id, char **out_text);

#define TAD_VERIFY_OPTIONS_VERSION 1
typedef struct tad_verify_options {
    unsigned int version;
    int cpu; /* 1: CPU interpreter in float64; 0: GPU through the worker */
    const char *dims_json; /* a JSON list of dims to check; NULL: the file's SWEEP */
    const char *dtypes; /* GPU: comma-separated torch dtype names; NULL: the file's DTYPES, else "float32,float16" */
    long long max_elements; /* CPU: skip dims whose tensors exceed this many elements (counted with
                               make_args on the meta device, before anything is allocated); 0: 1<<20 */
    unsigned int seed;
} tad_verify_options;
#define TAD_VERIFY_OPTIONS_INIT \
    { TAD_VERIFY_OPTIONS_VERSION, 0, 0, 0, 0, 0 }
TAD_API int tad_verify_options_init(tad_verify_options *opts, unsigned int version);

/* Verifies the current candidate. The report (JSON) is returned through `out_report` even when a
 * gradient disagrees; the status is then TAD_ERR_MISMATCH. The report is kept in the snapshot. */
TAD_API int tad_verify(tad_session *session, const tad_verify_options *opts, char **out_report);

#define TAD_BENCH_OPTIONS_VERSION 1
typedef struct tad_bench_options {
    unsigned int version;
    const char *dims_json; /* a JSON list of dims; NULL: the file's SWEEP */
    const char *dtypes; /* NULL: the file's DTYPES, else "float32,float16" */
    int reps; /* time budget of each measurement in ms (do_bench rep); 0: 100 */
} tad_bench_options;
#define TAD_BENCH_OPTIONS_INIT \
    { TAD_BENCH_OPTIONS_VERSION, 0, 0, 0 }
TAD_API int tad_bench_options_init(tad_bench_options *opts, unsigned int version);

/* Benchmarks the current candidate on the GPU (it must have passed verification). */
TAD_API int tad_bench(tad_session *session, const tad_bench_options *opts, char **out_report);

/* Stores the current candidate with its reports as a new snapshot labelled `label` (may be NULL); its
 * id is returned through `out_id` (may be NULL). */
TAD_API int tad_snapshot(tad_session *session, const char *label, char **out_id);

/* Makes snapshot `id` the current candidate again (its forward source and generated code). */
TAD_API int tad_rollback(tad_session *session, const char *id);

/* JSON list of the session's snapshots, oldest first (schema in docs/reports.md). */
TAD_API int tad_snapshot_list(tad_session *session, char **out_json);

/* Typed accessors for reports; the outputs are set only on success.
 * tad_report_passed: the report's top-level boolean "passed" (1 or 0); TAD_ERR_NOT_FOUND when it has
 * none (bench reports).
 * tad_report_number: `key` is a dotted path into the report, where a segment of digits indexes an
 * array: "summary.max_rel_err", "results.0.bwd_ms". TAD_ERR_NOT_FOUND "key '<key>' not in report"
 * when the path leads nowhere or to null (a number that could not be measured);
 * TAD_ERR_INVALID_ARGUMENT when the value is not a number, the key is malformed ("", "a..b") or the
 * text is not JSON. */
TAD_API int tad_report_passed(const char *report_json, int *passed);
TAD_API int tad_report_number(const char *report_json, const char *key, double *value);

/* Retrieval (docs/retrieval.md): the entries of a dataset of forward/backward pairs whose forward is
 * closest to a forward file, by local, deterministic features (tile-IR and AST n-grams, identifier
 * sub-tokens, structural counts) searched in a FAISS inner-product index. The index is kept in a
 * cache directory and rebuilt when the dataset's files change. */
#define TAD_RETRIEVE_OPTIONS_VERSION 1
typedef struct tad_retrieve_options {
    unsigned int version;
    int topk; /* results wanted; 0: 4 */
    double min_sim; /* results less similar are left out, in [-1, 1]; 0: none is (similarities are >= 0) */
    const char *exclude; /* path substrings, one per line: entries whose path holds one are left out;
                            NULL: none */
    const char *dataset_dir; /* NULL: $TAD_DATASET, else tad's own dataset/ */
    const char *cache_dir; /* index and generated backwards; NULL: <dataset_dir>/.cache when writable,
                              else $XDG_CACHE_HOME/tad/dataset-<hash> */
} tad_retrieve_options;
#define TAD_RETRIEVE_OPTIONS_INIT \
    { TAD_RETRIEVE_OPTIONS_VERSION, 0, 0.0, 0, 0, 0 }
TAD_API int tad_retrieve_options_init(tad_retrieve_options *opts, unsigned int version);

/* The dataset entries closest to the loaded forward, best first, as JSON (docs/reports.md, "Retrieve
 * report"): each with its path, family, similarity, backward and `why` (the features that matched).
 * TAD_ERR_STATE without a loaded forward; TAD_ERR_IO when the dataset directory is missing;
 * TAD_ERR_UNSUPPORTED when the FAISS plugin (libtad_faiss.so) cannot be loaded. */
TAD_API int tad_retrieve(tad_session *session, const tad_retrieve_options *opts, char **out_report);

/* Every entry of the dataset named by opts->dataset_dir / cache_dir (the other fields are not read;
 * NULL opts: the defaults) with its metadata, backward and feature counts, as JSON (docs/reports.md,
 * "Dataset listing"). It computes the features without the index, so it works without FAISS. */
TAD_API int tad_dataset_list(const tad_retrieve_options *opts, char **out_json);

/* Converts every *.py of `source_dir` written in the sectioned fwd/bwd layout ("shared helpers",
 * "forward kernels", "backward kernels", "autograd.Function" sections; docs/retrieval.md) into an
 * entry of `dataset_dir` (NULL: the default dataset): a forward file with a @tad.autodiff stub made
 * from the autograd.Function's forward, the original file as its backward, and a sidecar. A file that
 * cannot be converted is listed with the reason, not fatal. Report: docs/reports.md, "Import report". */
TAD_API int tad_dataset_import(const char *source_dir, const char *dataset_dir, char **out_report);

/* Caller-owned float64 storage of one tensor: `size` elements at `data`. */
typedef struct tad_buffer {
    double *data;
    long long size;
} tad_buffer;

/* Runs one launch of a @triton.jit kernel on tad's CPU interpreter, in float64 whatever the tensors'
 * dtypes: the executor of the CPU tier's whole-stub check (the stand-in triton calls it for every
 * launch; docs/worker-protocol.md). `source` is the text of the Python file that defines the kernel
 * (`path` names it in diagnostics). `launch_json` describes the launch as a trace record does
 * (docs/worker-protocol.md): {"kernel": name, "grid": [x, y, z], "args": [every kernel parameter]},
 * where a tensor argument's "ref" is {"buffer": i}, buffers[i], and its "offset" the element it
 * starts at; its "dtype" is the tensor's own (it types the kernel's arithmetic). The kernel reads and
 * writes the buffers in place; on failure they are left as they were. Not tied to a session: any
 * thread may call it. */
TAD_API int tad_interpret(const char *source, const char *path, const char *launch_json, tad_buffer *buffers,
                          int num_buffers);

/* ---- Generated backwards without Python: export, load, launch (docs/aot.md) ----
 *
 * tad_export compiles the current candidate's backward on the GPU (through the worker and Triton)
 * into a directory of cubins plus manifest.json (docs/reports.md, "Kernel manifest"). A program
 * without Python then loads that directory with tad_kernels_load (libcuda is opened with dlopen:
 * libtad itself needs no CUDA) and runs the backward of one forward launch on its own CUDA stream
 * and device buffers with tad_launch_backward. Only stubs that launch one kernel are exported. */

#define TAD_EXPORT_OPTIONS_VERSION 1
typedef struct tad_export_options {
    unsigned int version;
    const char *out_dir; /* the directory to write (created; its manifest and cubins replaced); required */
    const char *dims_json; /* a JSON list of dims (or one dims object) to compile for: each gives the
                              constexpr values and argument specializations a launch will have;
                              NULL: the file's SWEEP */
    const char *dtypes; /* comma-separated torch dtype names; NULL: the file's DTYPES, else "float32,float16" */
} tad_export_options;
#define TAD_EXPORT_OPTIONS_INIT \
    { TAD_EXPORT_OPTIONS_VERSION, 0, 0, 0 }
TAD_API int tad_export_options_init(tad_export_options *opts, unsigned int version);

/* Runs the current candidate's module on the GPU for every dims entry and dtype and keeps every
 * cubin its backward launched (the exact kernels, options and argument specializations Triton
 * compiled), plus tad's support kernels (partial-row sums, casts). The report (JSON, docs/reports.md
 * "Export report") is returned through `out_report` (may be NULL). Errors: TAD_ERR_NO_GPU without a
 * GPU worker; TAD_ERR_UNSUPPORTED for a backward tad_launch_backward cannot run (the message names
 * the step); TAD_ERR_STATE before tad_generate. */
TAD_API int tad_export(tad_session *session, const tad_export_options *opts, char **out_report);

/* Exported kernels loaded on a GPU. Used by one thread at a time, launching on one stream at a time
 * (its workspace is shared by its launches). */
typedef struct tad_kernels tad_kernels;

#define TAD_KERNELS_OPTIONS_VERSION 1
typedef struct tad_kernels_options {
    unsigned int version;
    const char *libcuda; /* the CUDA driver library to dlopen; NULL: $TAD_LIBCUDA, else "libcuda.so.1" */
} tad_kernels_options;
#define TAD_KERNELS_OPTIONS_INIT \
    { TAD_KERNELS_OPTIONS_VERSION, 0 }
TAD_API int tad_kernels_options_init(tad_kernels_options *opts, unsigned int version);

/* Loads the export in `dir` into the calling thread's current CUDA context (the caller makes one
 * current first, e.g. cuDevicePrimaryCtxRetain + cuCtxSetCurrent). `opts` may be NULL. Errors:
 * TAD_ERR_IO (no readable manifest or cubin), TAD_ERR_INVALID_ARGUMENT ("<dir>/manifest.json: ..."
 * for a manifest that is not one), TAD_ERR_UNSUPPORTED (a plan step this libtad does not run),
 * TAD_ERR_NO_GPU (no libcuda, no current context, another GPU architecture than the export's, or a
 * failing driver call: "cuModuleLoadData(...): CUDA_ERROR_..."). */
TAD_API int tad_kernels_load(const char *dir, const tad_kernels_options *opts, tad_kernels **out);
TAD_API void tad_kernels_free(tad_kernels *kernels);

/* The manifest of loaded kernels (JSON text, docs/reports.md), for a caller that wants the forward
 * kernel's parameters or the cubins. */
TAD_API int tad_kernels_manifest(tad_kernels *kernels, char **out_json);

/* A tensor argument of the forward launch, by its pointer parameter's name. Device pointers are
 * CUdeviceptr values. `grad` is laid out as the tensor (same dtype, shape and strides); the backward
 * may write anywhere in its storage span (elements 0 to 1 + sum((shape[d] - 1) * strides[d]) - 1).
 * For a tensor the stub returns, `grad` is the incoming gradient (read; 0: zeros); for a stub input
 * whose gradient the backward computes, `grad` receives it (0: not wanted); otherwise 0. `saved` is
 * a copy of the tensor taken before the forward launch, needed where the launch overwrites what the
 * backward reads (the manifest's plan lists such copies under "snapshots"); else 0. */
typedef struct tad_tensor_arg {
    const char *name;
    unsigned long long data;
    unsigned long long grad;
    unsigned long long saved;
    const char *dtype; /* torch's name: "float32", "float16", "bfloat16", "float64", "int32", "int64", ... */
    int ndim;
    const long long *shape;
    const long long *strides; /* in elements */
} tad_tensor_arg;

/* A scalar or constexpr argument of the forward launch, by parameter name. `kind` says which field
 * holds its value: TAD_VALUE_INT a Python int in `integer`, TAD_VALUE_FLOAT a Python float in `real`,
 * TAD_VALUE_BOOL a Python bool in `integer` (0 or 1), TAD_VALUE_LITERAL a constexpr that is no
 * number, as a Python literal in `literal` ("'tanh'"). */
#define TAD_VALUE_INT 0
#define TAD_VALUE_FLOAT 1
#define TAD_VALUE_BOOL 2
#define TAD_VALUE_LITERAL 3
typedef struct tad_value_arg {
    const char *name;
    int kind;
    long long integer;
    double real;
    const char *literal;
} tad_value_arg;

#define TAD_LAUNCH_OPTIONS_VERSION 1
typedef struct tad_launch_options {
    unsigned int version;
    void *stream; /* the CUstream to launch on; NULL: the legacy default stream */
    const char *kernel; /* the forward kernel; NULL: the export's (checked when given) */
    long long grid_x; /* the forward launch's grid; 0: 1 */
    long long grid_y;
    long long grid_z;
    int num_warps; /* the forward launch's options; 0: triton's defaults, 4 */
    int num_stages; /* 0: 3 */
    const tad_tensor_arg *tensors; /* every pointer argument of the forward launch */
    int num_tensors;
    const tad_value_arg *values; /* every other argument, constexprs included */
    int num_values;
} tad_launch_options;
#define TAD_LAUNCH_OPTIONS_INIT \
    { TAD_LAUNCH_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
TAD_API int tad_launch_options_init(tad_launch_options *opts, unsigned int version);

/* Enqueues the backward of the forward launch `opts` describes on its stream, as the generated
 * Python module runs it (the same plan, the same cubins): the gradients of the stub's inputs land
 * in their `grad` buffers once the stream reaches them. Returns after enqueueing (it synchronizes
 * the stream only when its workspace must grow). Every argument is checked before anything is
 * enqueued: TAD_ERR_INVALID_ARGUMENT names a missing or unknown argument, a dtype, or the argument
 * whose specialization no exported cubin has ("no exported cubin of K matches this launch: N: i32,
 * a multiple of 16 (exported: N: i32, not a multiple of 16); ..."). A failing driver call:
 * TAD_ERR_NO_GPU with the call's name and error. */
TAD_API int tad_launch_backward(tad_kernels *kernels, const tad_launch_options *opts);

#ifdef __cplusplus
}
#endif
#endif /* TAD_H */
