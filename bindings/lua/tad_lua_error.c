/*
 * tad_lua_error.c - tad.Error: how the Lua binding raises a failed status.
 */
#include <lauxlib.h>

#include "tad_lua.h"
#include "tad_lua_internal.h"

static const char *const kErrorMeta = "tad.Error";

static int error_tostring(lua_State *L) {
    lua_getfield(L, 1, "name");
    lua_pushliteral(L, ": ");
    lua_getfield(L, 1, "message");
    lua_concat(L, 3);
    return 1;
}

void tad_lua_open(lua_State *L) {
    if (luaL_newmetatable(L, kErrorMeta)) {
        lua_pushcfunction(L, error_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
}

int tad_lua_raise(lua_State *L, int status, const char *message, char *report) {
    /* The report goes into Lua first: nothing C-allocated is left when lua_error jumps. */
    if (report) lua_pushstring(L, report);
    tad_string_free(report);
    lua_createtable(L, 0, 4);
    if (report) {
        lua_insert(L, -2);
        lua_setfield(L, -2, "report");
    }
    lua_pushinteger(L, status);
    lua_setfield(L, -2, "status");
    lua_pushstring(L, tad_status_name(status));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, message);
    lua_setfield(L, -2, "message");
    luaL_setmetatable(L, kErrorMeta);
    return lua_error(L);
}

int tad_lua_raise_last(lua_State *L, int status, char *report) {
    return tad_lua_raise(L, status, tad_error_last(), report);
}
