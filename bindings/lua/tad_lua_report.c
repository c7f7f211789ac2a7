/*
 * tad_lua_report.c - the module's functions that need no session: report accessors and
 * tad_interpret over Lua arrays of numbers.
 */
#include <stdio.h>

#include <lauxlib.h>

#include "tad_lua.h"
#include "tad_lua_internal.h"

tad_lua_results tad_lua_report_passed(lua_State *L, const char *report) {
    int passed = 0;
    int status = tad_report_passed(report, &passed);
    if (status != TAD_OK) tad_lua_raise_last(L, status, NULL);
    lua_pushboolean(L, passed);
    return 1;
}

tad_lua_results tad_lua_report_number(lua_State *L, const char *report, const char *key) {
    double value = 0;
    int status = tad_report_number(report, key, &value);
    if (status != TAD_OK) tad_lua_raise_last(L, status, NULL);
    lua_pushnumber(L, value);
    return 1;
}

static void bad_buffer(lua_State *L, lua_Integer i, const char *why) {
    char message[120];
    snprintf(message, sizeof message, "tad.interpret: buffers[%lld] %s", (long long)i, why);
    tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, message, NULL);
}

/* Checks that buffers[i] is an array of numbers and returns its length. */
static lua_Integer buffer_length(lua_State *L, int buffers, lua_Integer i) {
    lua_Integer n, j;
    if (lua_rawgeti(L, buffers, i) != LUA_TTABLE) bad_buffer(L, i, "is not a table");
    n = (lua_Integer)lua_rawlen(L, -1);
    for (j = 1; j <= n; j++) {
        if (lua_rawgeti(L, -1, j) != LUA_TNUMBER) bad_buffer(L, i, "holds something that is not a number");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

/* Copies buffers[i] into `data` (to_lua 0) or back (to_lua 1). */
static void copy_buffer(lua_State *L, int buffers, lua_Integer i, double *data, lua_Integer n, int to_lua) {
    lua_Integer j;
    lua_rawgeti(L, buffers, i);
    for (j = 1; j <= n; j++) {
        if (to_lua) {
            lua_pushnumber(L, data[j - 1]);
            lua_rawseti(L, -2, j);
        } else {
            lua_rawgeti(L, -1, j);
            data[j - 1] = lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

tad_lua_results tad_lua_interpret(lua_State *L, const char *source, const char *path, const char *launch,
                                  tad_lua_table buffers) {
    lua_Integer count, i;
    tad_buffer *c_buffers;
    int status;
    if (!buffers) tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, "tad.interpret: buffers is nil", NULL);
    count = (lua_Integer)lua_rawlen(L, buffers);
    if (count > 1 << 16) tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, "tad.interpret: too many buffers", NULL);
    /* One userdata per buffer stays on the stack until the call is over. */
    luaL_checkstack(L, (int)count + 8, "tad.interpret: buffers");
    /* Userdata memory: collected by Lua even when an error is raised below. */
    c_buffers = (tad_buffer *)lua_newuserdatauv(L, sizeof(tad_buffer) * (size_t)(count ? count : 1), 0);
    for (i = 1; i <= count; i++) {
        lua_Integer n = buffer_length(L, buffers, i);
        c_buffers[i - 1].data = (double *)lua_newuserdatauv(L, sizeof(double) * (size_t)(n ? n : 1), 0);
        c_buffers[i - 1].size = n;
        copy_buffer(L, buffers, i, c_buffers[i - 1].data, n, 0);
    }
    status = tad_interpret(source, path, launch, c_buffers, (int)count);
    if (status != TAD_OK) tad_lua_raise_last(L, status, NULL);
    for (i = 1; i <= count; i++) copy_buffer(L, buffers, i, c_buffers[i - 1].data, c_buffers[i - 1].size, 1);
    lua_pop(L, (int)count + 1);
    return 0;
}
