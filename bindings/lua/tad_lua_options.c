/*
 * tad_lua_options.c - options tables: Lua tables whose fields fill tad's options structs.
 *
 * An unknown key is an error, so a misspelt option is not silently the default.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "tad_lua.h"
#include "tad_lua_internal.h"

tad_lua_table tad_lua_table_arg(lua_State *L, int index) {
    if (lua_isnoneornil(L, index)) return 0;
    luaL_checktype(L, index, LUA_TTABLE);
    return index;
}

static int is_known(const char *key, const char *const *known) {
    for (; *known; known++)
        if (strcmp(key, *known) == 0) return 1;
    return 0;
}

void tad_lua_check_keys(lua_State *L, int index, const char *what, const char *const *known) {
    char message[160];
    if (!index) return;
    lua_pushnil(L);
    while (lua_next(L, index) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            snprintf(message, sizeof message, "%s: option names are strings", what);
            tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, message, NULL);
        }
        if (!is_known(lua_tostring(L, -1), known)) {
            snprintf(message, sizeof message, "%s: unknown option '%.80s'", what, lua_tostring(L, -1));
            tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, message, NULL);
        }
    }
}

static void wrong_type(lua_State *L, const char *key, const char *expected) {
    char message[160];
    snprintf(message, sizeof message, "option '%.60s' must be %s, not %s", key, expected, luaL_typename(L, -1));
    tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, message, NULL);
}

const char *tad_lua_opt_string(lua_State *L, int index, const char *key) {
    if (!index) return NULL;
    lua_getfield(L, index, key);
    if (lua_isnil(L, -1)) return NULL;
    if (lua_type(L, -1) != LUA_TSTRING) wrong_type(L, key, "a string");
    return lua_tostring(L, -1);
}

double tad_lua_opt_number(lua_State *L, int index, const char *key) {
    double value = 0;
    if (!index) return 0;
    lua_getfield(L, index, key);
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TNUMBER) wrong_type(L, key, "a number");
        value = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return value;
}

int tad_lua_opt_boolean(lua_State *L, int index, const char *key) {
    int value = 0;
    if (!index) return 0;
    lua_getfield(L, index, key);
    if (!lua_isnil(L, -1)) {
        if (!lua_isboolean(L, -1)) wrong_type(L, key, "a boolean");
        value = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return value;
}
