/*
 * tad_lua_retrieve.c - the options of retrieval (s:retrieve{...}, tad.dataset_list{...}) and
 * tad.dataset_list itself (docs/retrieval.md). Both return the JSON text of their report.
 */
#include <lauxlib.h>

#include "tad_lua.h"
#include "tad_lua_internal.h"

static const char *const kRetrieveOptions[] = {"topk", "min_sim", "exclude", "dataset", "cache", NULL};
static const char *const kListOptions[] = {"dataset", "cache", NULL};

/* `exclude`: a string of lines, or a sequence of strings joined with newlines. The string is left
 * on the stack, which keeps it alive for the call. */
static const char *exclude_lines(lua_State *L, int options) {
    luaL_Buffer b;
    lua_Integer i, n;
    int list;
    if (!options) return NULL;
    if (lua_getfield(L, options, "exclude") != LUA_TTABLE) {
        lua_pop(L, 1);
        return tad_lua_opt_string(L, options, "exclude");
    }
    list = lua_absindex(L, -1);
    n = luaL_len(L, list);
    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, '\n');
        if (lua_geti(L, list, i) != LUA_TSTRING)
            tad_lua_raise(L, TAD_ERR_INVALID_ARGUMENT, "option 'exclude' must hold strings", NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

void tad_lua_retrieve_options(lua_State *L, int options, int query, tad_retrieve_options *o) {
    tad_retrieve_options_init(o, TAD_RETRIEVE_OPTIONS_VERSION);
    tad_lua_check_keys(L, options, query ? "retrieve" : "dataset_list", query ? kRetrieveOptions : kListOptions);
    o->dataset_dir = tad_lua_opt_string(L, options, "dataset");
    o->cache_dir = tad_lua_opt_string(L, options, "cache");
    if (!query) return;
    o->topk = (int)tad_lua_opt_number(L, options, "topk");
    o->min_sim = tad_lua_opt_number(L, options, "min_sim");
    o->exclude = exclude_lines(L, options);
}

tad_lua_results tad_lua_dataset_list(lua_State *L, tad_lua_table options) {
    tad_retrieve_options o;
    char *list = NULL;
    int status;
    tad_lua_retrieve_options(L, options, 0, &o);
    status = tad_dataset_list(&o, &list);
    if (status != TAD_OK) return tad_lua_raise_last(L, status, list);
    lua_pushstring(L, list);
    tad_string_free(list);
    return 1;
}
