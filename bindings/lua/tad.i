/*
 * tad.i - SWIG interface of the Lua 5.4 module `tad` over libtad's C ABI (include/tad.h).
 *
 *   local tad = require("tad")
 *   local s = tad.Session{work_dir = "/tmp/s", progress = function(stage, message, fraction) end}
 *   s:load_forward("examples/layernorm.py")
 *   local id = s:generate()
 *   local report = s:verify{cpu = true}          -- JSON text
 *   print(tad.report_number(report, "summary.max_rel_err"))
 *   local near = s:retrieve{topk = 4, exclude = {"rope"}}   -- JSON text (docs/retrieval.md)
 *   s:close()                                    -- or let __gc do it
 *
 * The C side is tad_lua_*.c: failures are raised as tad.Error tables {status, name, message,
 * report} and `char **out` results come back as Lua strings, freed on the C side.
 * docs/bindings.md documents the module.
 */
%module tad

%{
#include "tad_lua.h"
%}

/* A function returning tad_lua_results pushed that many values itself. */
%typemap(out) tad_lua_results %{ SWIG_arg += $1; %}
/* An optional options table: its stack index, 0 when absent or nil. */
%typemap(in, checkfn="lua_isnoneornil") tad_lua_table %{ $1 = tad_lua_table_arg(L, $input); %}
%typemap(in) tad_lua_table %{ $1 = tad_lua_table_arg(L, $input); %}
/* An argument of any type that is not used (the error value Lua passes to __close). */
%typemap(in, checkfn="lua_isnone") tad_lua_ignored %{ $1 = 0; %}
%typemap(in) tad_lua_ignored %{ $1 = 0; %}
/* One wrapper per function that checks how many arguments came, instead of one per arity. */
%feature("compactdefaultargs");

typedef int tad_lua_results;
typedef int tad_lua_table;
typedef int tad_lua_ignored;

/* The status codes, as tad.TAD_OK, tad.TAD_ERR_SYNTAX, ... */
enum tad_status {
    TAD_OK = 0,
    TAD_ERR_INVALID_ARGUMENT = -1,
    TAD_ERR_IO = -2,
    TAD_ERR_SYNTAX = -3,
    TAD_ERR_UNSUPPORTED = -4,
    TAD_ERR_NO_KERNEL = -5,
    TAD_ERR_WORKER = -6,
    TAD_ERR_TIMEOUT = -7,
    TAD_ERR_MISMATCH = -8,
    TAD_ERR_NOT_FOUND = -9,
    TAD_ERR_STATE = -10,
    TAD_ERR_CANCELLED = -11,
    TAD_ERR_NO_GPU = -12,
    TAD_ERR_INTERNAL = -99
};

%rename(version) tad_version;
const char *tad_version(void);
%rename(status_name) tad_status_name;
const char *tad_status_name(int status);
%rename(kill_workers) tad_kill_workers;
void tad_kill_workers(void);

%rename(report_passed) tad_lua_report_passed;
tad_lua_results tad_lua_report_passed(lua_State *L, const char *report);
%rename(report_number) tad_lua_report_number;
tad_lua_results tad_lua_report_number(lua_State *L, const char *report, const char *key);
%rename(interpret) tad_lua_interpret;
tad_lua_results tad_lua_interpret(lua_State *L, const char *source, const char *path, const char *launch,
                                  tad_lua_table buffers);

%rename(dataset_list) tad_lua_dataset_list;
tad_lua_results tad_lua_dataset_list(lua_State *L, tad_lua_table options = 0);

%rename(Session) TadSession;
typedef struct TadSession {
} TadSession;

%extend TadSession {
    TadSession(lua_State *L, tad_lua_table options = 0) { return tad_lua_session_new(L, options); }
    ~TadSession() { tad_lua_session_free($self); }
    /* Frees the session and stops its worker now; later calls raise. Idempotent. */
    void close() { tad_lua_session_close($self); }
    /* `local s <close> = tad.Session{...}` closes it at the end of the scope. */
    void __close(tad_lua_ignored error = 0) {
        (void)error;
        tad_lua_session_close($self);
    }
    tad_lua_results load_forward(lua_State *L, const char *path, const char *source = NULL) {
        return tad_lua_load_forward(L, $self, path, source);
    }
    tad_lua_results generate(lua_State *L, tad_lua_table options = 0) { return tad_lua_generate(L, $self, options); }
    tad_lua_results candidate_source(lua_State *L, const char *id = NULL) {
        return tad_lua_candidate_source(L, $self, id);
    }
    tad_lua_results candidate_explain(lua_State *L, const char *id = NULL) {
        return tad_lua_candidate_explain(L, $self, id);
    }
    tad_lua_results verify(lua_State *L, tad_lua_table options = 0) { return tad_lua_verify(L, $self, options); }
    tad_lua_results bench(lua_State *L, tad_lua_table options = 0) { return tad_lua_bench(L, $self, options); }
    tad_lua_results snapshot(lua_State *L, const char *label = NULL) { return tad_lua_snapshot(L, $self, label); }
    tad_lua_results rollback(lua_State *L, const char *id) { return tad_lua_rollback(L, $self, id); }
    tad_lua_results snapshots(lua_State *L) { return tad_lua_snapshot_list(L, $self); }
    /* The dataset entries closest to the loaded forward (JSON text; docs/reports.md). */
    tad_lua_results retrieve(lua_State *L, tad_lua_table options = 0) { return tad_lua_retrieve(L, $self, options); }
}

%init %{
    tad_lua_open(L);
%}
