/*
 * tad_lua.h - the C side of the Lua binding (tad.i wraps these for SWIG).
 *
 * Every function that can fail raises a Lua error instead of returning a status: a tad.Error table
 * {status, name, message, report} whose __tostring is "NAME: message". Strings returned through
 * `char **out` are copied into Lua strings and freed before anything is raised, so a raised error
 * leaks nothing. Functions returning tad_lua_results say how many values they pushed.
 */
#ifndef TAD_LUA_H
#define TAD_LUA_H

#include <lua.h>

#include "tad.h"

typedef int tad_lua_results;
/* Stack index of an optional table argument; 0 when it is absent or nil. */
typedef int tad_lua_table;
/* An argument a wrapper accepts and does not use. */
typedef int tad_lua_ignored;

/* A session as Lua holds it: the handle (NULL once closed), the progress function and, while a
 * call runs, the Lua thread that made it. */
typedef struct TadSession {
    tad_session *session;
    lua_State *main; /* for the registry references, from __gc too */
    lua_State *caller; /* the thread running a session call; NULL between calls */
    int progress_ref; /* the progress function, or LUA_NOREF */
    int stash_ref; /* a table whose [1] holds an error raised in the progress function */
} TadSession;

tad_lua_table tad_lua_table_arg(lua_State *L, int index);
void tad_lua_open(lua_State *L);

TadSession *tad_lua_session_new(lua_State *L, tad_lua_table options);
void tad_lua_session_close(TadSession *self);
void tad_lua_session_free(TadSession *self);

tad_lua_results tad_lua_load_forward(lua_State *L, TadSession *self, const char *path, const char *source);
tad_lua_results tad_lua_generate(lua_State *L, TadSession *self, tad_lua_table options);
tad_lua_results tad_lua_candidate_source(lua_State *L, TadSession *self, const char *id);
tad_lua_results tad_lua_candidate_explain(lua_State *L, TadSession *self, const char *id);
tad_lua_results tad_lua_verify(lua_State *L, TadSession *self, tad_lua_table options);
tad_lua_results tad_lua_bench(lua_State *L, TadSession *self, tad_lua_table options);
tad_lua_results tad_lua_snapshot(lua_State *L, TadSession *self, const char *label);
tad_lua_results tad_lua_rollback(lua_State *L, TadSession *self, const char *id);
tad_lua_results tad_lua_snapshot_list(lua_State *L, TadSession *self);
tad_lua_results tad_lua_retrieve(lua_State *L, TadSession *self, tad_lua_table options);
tad_lua_results tad_lua_dataset_list(lua_State *L, tad_lua_table options);

tad_lua_results tad_lua_report_passed(lua_State *L, const char *report);
tad_lua_results tad_lua_report_number(lua_State *L, const char *report, const char *key);
tad_lua_results tad_lua_interpret(lua_State *L, const char *source, const char *path, const char *launch,
                                  tad_lua_table buffers);

#endif
