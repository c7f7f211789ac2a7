/*
 * tad_lua_internal.h - what the files of the Lua binding share and the module does not export.
 */
#ifndef TAD_LUA_INTERNAL_H
#define TAD_LUA_INTERNAL_H

#include <lua.h>

/* Raises tad.Error for `status` with `message`; frees `report` (may be NULL) after copying it into
 * the error's `report`. Never returns. */
int tad_lua_raise(lua_State *L, int status, const char *message, char *report);
/* The same with tad_error_last() as the message. */
int tad_lua_raise_last(lua_State *L, int status, char *report);

/* Raises TAD_ERR_INVALID_ARGUMENT naming the first key of the table at `index` that is not in the
 * NULL-terminated `known` (`what` names the table in the message). */
void tad_lua_check_keys(lua_State *L, int index, const char *what, const char *const *known);
/* Optional fields of the options table at `index` (0: no table). A string field is pushed and left
 * on the stack, which keeps the returned pointer valid; the others are popped. */
const char *tad_lua_opt_string(lua_State *L, int index, const char *key);
double tad_lua_opt_number(lua_State *L, int index, const char *key);
int tad_lua_opt_boolean(lua_State *L, int index, const char *key);

/* The retrieval options table at `options` (0: none) in *o: dataset and cache, and with `query`
 * also topk, min_sim and exclude (a string of lines or a sequence of strings). */
struct tad_retrieve_options;
void tad_lua_retrieve_options(lua_State *L, int options, int query, struct tad_retrieve_options *o);

#endif
