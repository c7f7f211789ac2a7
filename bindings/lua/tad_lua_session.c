/*
 * tad_lua_session.c - tad.Session: a session handle owned by a Lua userdata (__gc and close()),
 * its calls, and the progress function.
 *
 * The progress callback runs inside a tad_ call, under C++ frames: nothing may longjmp through
 * them. So it only pushes values that need no allocation and runs the Lua function under
 * lua_pcall; an error raised there cancels the call (TAD_ERR_CANCELLED) and is kept in a table
 * preallocated for it, to be raised again once the call has returned.
 */
#include <stdlib.h>

#include <lauxlib.h>

#include "tad_lua.h"
#include "tad_lua_internal.h"

static int progress_protected(lua_State *L) {
    TadSession *self = (TadSession *)lua_touserdata(L, 1);
    double fraction = lua_tonumber(L, 4);
    lua_rawgeti(L, LUA_REGISTRYINDEX, self->progress_ref);
    lua_pushstring(L, (const char *)lua_touserdata(L, 2));
    lua_pushstring(L, (const char *)lua_touserdata(L, 3));
    if (fraction < 0)
        lua_pushnil(L);
    else
        lua_pushnumber(L, fraction);
    lua_call(L, 3, 1);
    /* Only an explicit false cancels: a function that returns nothing lets the step go on. */
    lua_pushboolean(L, lua_isboolean(L, -1) && !lua_toboolean(L, -1));
    return 1;
}

/* Whether an error raised by the progress function waits in the stash; pushes nothing. */
static int error_pending(lua_State *L, TadSession *self) {
    int pending;
    lua_rawgeti(L, LUA_REGISTRYINDEX, self->stash_ref);
    pending = lua_rawgeti(L, -1, 1) != LUA_TNIL;
    lua_pop(L, 2);
    return pending;
}

static int progress(const char *stage, const char *message, double fraction, void *payload) {
    TadSession *self = (TadSession *)payload;
    lua_State *L = self->caller;
    int cancel;
    if (!L || !lua_checkstack(L, 8) || error_pending(L, self)) return 1;
    lua_pushcfunction(L, progress_protected);
    lua_pushlightuserdata(L, self);
    lua_pushlightuserdata(L, (void *)stage);
    lua_pushlightuserdata(L, (void *)message);
    lua_pushnumber(L, fraction);
    if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
        /* stash[1] = the error; the slot is in the table's array part: no allocation. */
        lua_rawgeti(L, LUA_REGISTRYINDEX, self->stash_ref);
        lua_insert(L, -2);
        lua_rawseti(L, -2, 1);
        lua_pop(L, 1);
        return 1;
    }
    cancel = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return cancel;
}

static const char *const kSessionOptions[] = {
    "work_dir", "python", "device_index", "worker_timeout_s", "startup_timeout_s", "progress", NULL};

/* Pushes the main thread's registry reference of the progress function (or LUA_NOREF). */
static int progress_ref(lua_State *L, tad_lua_table options) {
    if (!options) return LUA_NOREF;
    lua_getfield(L, options, "progress");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return LUA_NOREF;
    }
    if (!lua_isfunction(L, -1))
        tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, "option 'progress' must be a function", NULL);
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

static void unref(TadSession *self) {
    luaL_unref(self->main, LUA_REGISTRYINDEX, self->progress_ref);
    luaL_unref(self->main, LUA_REGISTRYINDEX, self->stash_ref);
    self->progress_ref = self->stash_ref = LUA_NOREF;
}

/* Fills `o` from the options table; the strings it points to stay on the stack. */
static void session_options(lua_State *L, tad_lua_table options, tad_session_options *o) {
    tad_session_options_init(o, TAD_SESSION_OPTIONS_VERSION);
    tad_lua_check_keys(L, options, "tad.Session", kSessionOptions);
    o->work_dir = tad_lua_opt_string(L, options, "work_dir");
    o->python = tad_lua_opt_string(L, options, "python");
    o->device_index = (int)tad_lua_opt_number(L, options, "device_index");
    o->worker_timeout_s = tad_lua_opt_number(L, options, "worker_timeout_s");
    o->startup_timeout_s = tad_lua_opt_number(L, options, "startup_timeout_s");
}

TadSession *tad_lua_session_new(lua_State *L, tad_lua_table options) {
    tad_session_options o;
    TadSession *self;
    int status, progress_fn, stash;
    session_options(L, options, &o);
    /* Lua allocations first: an error raised by them leaves nothing to free. */
    progress_fn = progress_ref(L, options);
    lua_createtable(L, 1, 0);
    lua_pushboolean(L, 0);
    lua_rawseti(L, -2, 1); /* sizes the array part; [1] is cleared below */
    lua_pushnil(L);
    lua_rawseti(L, -2, 1);
    stash = luaL_ref(L, LUA_REGISTRYINDEX);
    self = (TadSession *)calloc(1, sizeof *self);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    if (self) {
        self->main = lua_tothread(L, -1);
        self->progress_ref = progress_fn;
        self->stash_ref = stash;
    }
    lua_pop(L, 1);
    if (!self) {
        luaL_unref(L, LUA_REGISTRYINDEX, progress_fn);
        luaL_unref(L, LUA_REGISTRYINDEX, stash);
        tad_lua_raise(L, TAD_ERR_INTERNAL, "tad.Session: out of memory", NULL);
    }
    if (progress_fn != LUA_NOREF) {
        o.progress = progress;
        o.progress_payload = self;
    }
    status = tad_session_new(&o, &self->session);
    if (status != TAD_OK) {
        unref(self);
        free(self);
        tad_lua_raise_last(L, status, NULL);
    }
    return self;
}

void tad_lua_session_close(TadSession *self) {
    if (!self->session) return;
    tad_session_free(self->session);
    self->session = NULL;
    unref(self);
}

void tad_lua_session_free(TadSession *self) {
    tad_lua_session_close(self);
    free(self);
}

static void begin(lua_State *L, TadSession *self) {
    if (!self->session) tad_lua_raise(L, TAD_ERR_STATE, "tad.Session: the session is closed", NULL);
    /* tad.h: a session serves one call at a time (a progress function may not call back into it). */
    if (self->caller) tad_lua_raise(L, TAD_ERR_STATE, "tad.Session: a call on this session is running", NULL);
    self->caller = L;
}

/* Ends a call: raises the progress function's error or the call's status, else pushes `out` (when
 * `has_out`) as a string and returns the number of values pushed. `out` is freed in every case. */
static tad_lua_results finish(lua_State *L, TadSession *self, int status, char *out, int has_out) {
    self->caller = NULL;
    lua_rawgeti(L, LUA_REGISTRYINDEX, self->stash_ref);
    if (lua_rawgeti(L, -1, 1) != LUA_TNIL) {
        lua_pushnil(L);
        lua_rawseti(L, -3, 1);
        tad_string_free(out);
        return lua_error(L);
    }
    lua_pop(L, 2);
    if (status != TAD_OK) return tad_lua_raise_last(L, status, out);
    if (!has_out) return 0;
    if (out)
        lua_pushstring(L, out);
    else
        lua_pushnil(L);
    tad_string_free(out);
    return 1;
}

tad_lua_results tad_lua_load_forward(lua_State *L, TadSession *self, const char *path, const char *source) {
    begin(L, self);
    return finish(L, self, tad_load_forward(self->session, path, source), NULL, 0);
}

static const char *const kGenerateOptions[] = {"backend", "dims", "launch", "loops", NULL};

tad_lua_results tad_lua_generate(lua_State *L, TadSession *self, tad_lua_table options) {
    tad_generate_options o;
    char *id = NULL;
    int status;
    tad_generate_options_init(&o, TAD_GENERATE_OPTIONS_VERSION);
    tad_lua_check_keys(L, options, "generate", kGenerateOptions);
    o.backend = tad_lua_opt_string(L, options, "backend");
    o.dims_json = tad_lua_opt_string(L, options, "dims");
    o.launch_json = tad_lua_opt_string(L, options, "launch");
    o.loops = tad_lua_opt_string(L, options, "loops");
    begin(L, self);
    status = tad_generate(self->session, &o, &id);
    return finish(L, self, status, id, 1);
}

tad_lua_results tad_lua_candidate_source(lua_State *L, TadSession *self, const char *id) {
    char *source = NULL;
    int status;
    begin(L, self);
    status = tad_candidate_source(self->session, id, &source);
    return finish(L, self, status, source, 1);
}

tad_lua_results tad_lua_candidate_explain(lua_State *L, TadSession *self, const char *id) {
    char *text = NULL;
    int status;
    begin(L, self);
    status = tad_candidate_explain(self->session, id, &text);
    return finish(L, self, status, text, 1);
}

static const char *const kVerifyOptions[] = {"cpu", "dims", "dtypes", "max_elements", "seed", NULL};

tad_lua_results tad_lua_verify(lua_State *L, TadSession *self, tad_lua_table options) {
    tad_verify_options o;
    char *report = NULL;
    int status;
    tad_verify_options_init(&o, TAD_VERIFY_OPTIONS_VERSION);
    tad_lua_check_keys(L, options, "verify", kVerifyOptions);
    o.cpu = tad_lua_opt_boolean(L, options, "cpu");
    o.dims_json = tad_lua_opt_string(L, options, "dims");
    o.dtypes = tad_lua_opt_string(L, options, "dtypes");
    o.max_elements = (long long)tad_lua_opt_number(L, options, "max_elements");
    o.seed = (unsigned int)tad_lua_opt_number(L, options, "seed");
    begin(L, self);
    status = tad_verify(self->session, &o, &report);
    return finish(L, self, status, report, 1);
}

static const char *const kBenchOptions[] = {"dims", "dtypes", "reps", NULL};

tad_lua_results tad_lua_bench(lua_State *L, TadSession *self, tad_lua_table options) {
    tad_bench_options o;
    char *report = NULL;
    int status;
    tad_bench_options_init(&o, TAD_BENCH_OPTIONS_VERSION);
    tad_lua_check_keys(L, options, "bench", kBenchOptions);
    o.dims_json = tad_lua_opt_string(L, options, "dims");
    o.dtypes = tad_lua_opt_string(L, options, "dtypes");
    o.reps = (int)tad_lua_opt_number(L, options, "reps");
    begin(L, self);
    status = tad_bench(self->session, &o, &report);
    return finish(L, self, status, report, 1);
}

tad_lua_results tad_lua_snapshot(lua_State *L, TadSession *self, const char *label) {
    char *id = NULL;
    int status;
    begin(L, self);
    status = tad_snapshot(self->session, label, &id);
    return finish(L, self, status, id, 1);
}

tad_lua_results tad_lua_rollback(lua_State *L, TadSession *self, const char *id) {
    begin(L, self);
    return finish(L, self, tad_rollback(self->session, id), NULL, 0);
}

tad_lua_results tad_lua_retrieve(lua_State *L, TadSession *self, tad_lua_table options) {
    tad_retrieve_options o;
    char *report = NULL;
    int status;
    tad_lua_retrieve_options(L, options, 1, &o);
    begin(L, self);
    status = tad_retrieve(self->session, &o, &report);
    return finish(L, self, status, report, 1);
}

tad_lua_results tad_lua_snapshot_list(lua_State *L, TadSession *self) {
    char *list = NULL;
    int status;
    begin(L, self);
    status = tad_snapshot_list(self->session, &list);
    return finish(L, self, status, list, 1);
}
