-- Tests of the Lua module `tad` (bindings/lua): run with lua5.4, the module on LUA_CPATH.
--   LUA_CPATH=build/lua/?.so lua5.4 bindings/lua/tests/test_tad.lua [test name pattern]
-- The worker runs on $TAD_TEST_PYTHON or $TAD_PYTHON (default /usr/bin/python3, with CPU torch);
-- the tests that need it print "[SKIP] ..." when it cannot import torch. Exits 1 when a test fails.
local tad = require("tad")

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local repo = os.getenv("TAD_SOURCE_DIR") or (here .. "/../../..")
local python = os.getenv("TAD_TEST_PYTHON") or os.getenv("TAD_PYTHON") or "/usr/bin/python3"
local torch = os.execute(python .. " -c 'import torch' 2>/dev/null")

local tests, order = {}, {}
local function test(name, fn)
  tests[name] = fn
  order[#order + 1] = name
end

local function check(cond, message, level)
  if not cond then error(message or "check failed", (level or 1) + 1) end
end

local function eq(got, want, what)
  check(got == want, string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)), 2)
end

-- Runs fn and returns the error it raised; fails when it raises nothing.
local function raises(fn, ...)
  local ok, err = pcall(fn, ...)
  check(not ok, "expected an error", 2)
  return err
end

local function expect_tad_error(err, name)
  check(type(err) == "table", "not a tad.Error: " .. tostring(err), 2)
  eq(err.name, name, "error name")
  eq(err.status, tad[name], "error status")
  eq(tostring(err), name .. ": " .. err.message, "tostring(error)")
end

local function tempdir()
  local path = os.tmpname()
  os.remove(path)
  assert(os.execute("mkdir -p '" .. path .. "'"))
  return path
end

local function rmdir(path)
  os.execute("rm -rf '" .. path .. "'")
end

local function session(dir, extra)
  local options = {work_dir = dir, python = python}
  for k, v in pairs(extra or {}) do options[k] = v end
  return tad.Session(options)
end

local function read(path)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  return text
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- The child processes of this process (the sessions' workers), or nil where /proc cannot say.
local function children()
  local pid = read("/proc/self/stat"):match("^(%d+)")
  local f = io.open("/proc/" .. pid .. "/task/" .. pid .. "/children")
  if not f then return nil end
  local list = f:read("a")
  f:close()
  return list:gsub("%s+$", "")
end

test("version_and_status_names", function()
  check(tad.version():match("^0%.2%.%d+$"), tad.version())
  local names = {"TAD_OK", "TAD_ERR_INVALID_ARGUMENT", "TAD_ERR_IO", "TAD_ERR_SYNTAX", "TAD_ERR_UNSUPPORTED",
                 "TAD_ERR_NO_KERNEL", "TAD_ERR_WORKER", "TAD_ERR_TIMEOUT", "TAD_ERR_MISMATCH",
                 "TAD_ERR_NOT_FOUND", "TAD_ERR_STATE", "TAD_ERR_CANCELLED", "TAD_ERR_NO_GPU", "TAD_ERR_INTERNAL"}
  for _, name in ipairs(names) do
    eq(tad.status_name(tad[name]), name, "the library's name of tad." .. name)
  end
end)

test("failures_raise_tad_errors", function()
  local dir = tempdir()
  local s = session(dir)
  local missing = dir .. "/missing.py"
  local err = raises(s.load_forward, s, missing)
  expect_tad_error(err, "TAD_ERR_IO")
  check(err.message:find(missing, 1, true), err.message)
  eq(err.report, nil, "report")
  err = raises(s.load_forward, s, "bad.py", "import triton\n\ndef f(:\n    pass\n")
  expect_tad_error(err, "TAD_ERR_SYNTAX")
  check(err.message:find("^bad%.py:3:"), err.message)
  expect_tad_error(raises(s.verify, s, {cpu = true}), "TAD_ERR_STATE")
  err = raises(s.rollback, s, "0042-deadbeef")
  expect_tad_error(err, "TAD_ERR_NOT_FOUND")
  check(err.message:find("0042-deadbeef", 1, true), err.message)
  s:close()
  rmdir(dir)
end)

test("options_are_checked", function()
  local dir = tempdir()
  local err = raises(tad.Session, {work_dir = dir, wrok_dir = dir})
  expect_tad_error(err, "TAD_ERR_INVALID_ARGUMENT")
  eq(err.message, "tad.Session: unknown option 'wrok_dir'", "message")
  err = raises(tad.Session, {work_dir = 42 < 0})
  eq(err.message, "option 'work_dir' must be a string, not boolean", "message")
  local s = session(dir)
  err = raises(s.verify, s, {cpuu = true})
  eq(err.message, "verify: unknown option 'cpuu'", "message")
  err = raises(s.verify, s, {cpu = 1})
  eq(err.message, "option 'cpu' must be a boolean, not number", "message")
  err = raises(s.generate, s, {progress = print})
  eq(err.message, "generate: unknown option 'progress'", "message")
  err = raises(tad.Session, {progress = "not a function"})
  eq(err.message, "option 'progress' must be a function", "message")
  -- Option values reach the library, which names what it accepts.
  s:load_forward(repo .. "/examples/gelu.py")
  err = raises(s.generate, s, {loops = "sideways"})
  expect_tad_error(err, "TAD_ERR_INVALID_ARGUMENT")
  eq(err.message, "tad_generate: unknown loops policy 'sideways' (available: recompute, tape, auto)", "message")
  s:close()
  rmdir(dir)
end)

test("reports_are_read_by_dotted_paths", function()
  local report = '{"passed": false, "results": [{"bwd_ms": 0.25}, {"bwd_ms": null}]}'
  eq(tad.report_passed(report), false, "passed")
  eq(tad.report_number(report, "results.0.bwd_ms"), 0.25, "results.0.bwd_ms")
  expect_tad_error(raises(tad.report_number, report, "results.1.bwd_ms"), "TAD_ERR_NOT_FOUND")
  expect_tad_error(raises(tad.report_number, report, "a..b"), "TAD_ERR_INVALID_ARGUMENT")
  expect_tad_error(raises(tad.report_passed, "{}"), "TAD_ERR_NOT_FOUND")
end)

test("interpret_runs_a_launch_on_lua_arrays", function()
  local source = [[
import triton
import triton.language as tl


@triton.jit
def scale(X, Y, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(Y + offs, alpha * tl.load(X + offs, mask=mask), mask=mask)
]]
  local launch = [[{"kernel": "scale", "grid": [2, 1, 1], "args": [
    {"name": "X", "kind": "tensor", "ref": {"buffer": 0}, "offset": 0, "dtype": "float64"},
    {"name": "Y", "kind": "tensor", "ref": {"buffer": 1}, "offset": 0, "dtype": "float64"},
    {"name": "n", "kind": "int", "value": 5},
    {"name": "alpha", "kind": "float", "value": 0.5},
    {"name": "BLOCK", "kind": "int", "value": 4}]}]]
  local x, y = {1, 2, 3, 4, 5}, {-1, -1, -1, -1, -1}
  tad.interpret(source, "k.py", launch, {x, y})
  eq(table.concat(y, " "), "0.5 1.0 1.5 2.0 2.5", "y")
  eq(table.concat(x, " "), "1.0 2.0 3.0 4.0 5.0", "x")
  expect_tad_error(raises(tad.interpret, source, "k.py", launch:gsub('"scale"', '"nope"'), {x, y}),
                   "TAD_ERR_NO_KERNEL")
  -- More buffers than Lua's minimum C stack (20 slots): the unused ones are passed through.
  local many = {x, y}
  for i = 3, 100 do many[i] = {i} end
  tad.interpret(source, "k.py", launch:gsub('"value": 0.5', '"value": 2'), many)
  eq(table.concat(y, " "), "2.0 4.0 6.0 8.0 10.0", "y from 100 buffers")
  eq(many[100][1], 100, "an unused buffer")
  local err = raises(tad.interpret, source, "k.py", launch, {x, {1, "two"}})
  eq(err.message, "tad.interpret: buffers[2] holds something that is not a number", "message")
end)

test("close_frees_the_session_and_gc_too", function()
  local dir = tempdir()
  local s = session(dir)
  s:close()
  s:close() -- idempotent
  local err = raises(s.snapshots, s)
  expect_tad_error(err, "TAD_ERR_STATE")
  eq(err.message, "tad.Session: the session is closed", "message")
  local kept
  do
    local scoped <close> = session(dir)
    kept = scoped
  end
  eq(raises(kept.snapshots, kept).message, "tad.Session: the session is closed", "after <close>")
  for _ = 1, 20 do session(dir) end
  collectgarbage()
  collectgarbage()
  rmdir(dir)
end)

-- The worker is a child process: close() and __gc stop it with the session.
test("close_and_gc_stop_the_worker", function()
  if not torch then return "skip", python .. " cannot import torch" end
  if children() == nil then return "skip", "/proc does not list child processes" end
  eq(children(), "", "children before")
  local dir = tempdir()
  local s = session(dir)
  s:load_forward(repo .. "/examples/gelu.py")
  s:generate()
  check(children() ~= "", "a worker runs after generate")
  s:close()
  eq(children(), "", "children after close()")
  s = session(dir)
  s:load_forward(repo .. "/examples/gelu.py")
  s:generate()
  check(children() ~= "", "a worker runs after generate")
  s = nil -- luacheck: ignore
  collectgarbage()
  collectgarbage()
  eq(children(), "", "children after __gc")
  rmdir(dir)
end)

test("the_loop_runs_on_layernorm", function()
  if not torch then return "skip", python .. " cannot import torch" end
  local dir = tempdir()
  local s = session(dir)
  s:load_forward(repo .. "/examples/layernorm.py")
  local id = s:generate()
  check(id:match("^%d%d%d%d%-%x+$"), id)
  check(s:candidate_source():find("torch.autograd.Function", 1, true), "the module's source")
  eq(s:candidate_source(id), s:candidate_source(), "source of the id")
  check(#s:candidate_explain() > 0, "explain")
  local report = s:verify{cpu = true}
  eq(tad.report_passed(report), true, "passed")
  check(tad.report_number(report, "summary.max_rel_err") < 1e-6, report)
  check(report:find('"mode"%s*:%s*"cpu"'), report)
  local labelled = s:snapshot("checked")
  check(labelled ~= id, "a new snapshot id")
  local list = s:snapshots()
  check(list:find(id, 1, true) and list:find(labelled, 1, true), list)
  check(list:find('"label"%s*:%s*"checked"'), list)
  s:rollback(id)
  s:close()
  rmdir(dir)
end)

test("a_wrong_backward_raises_a_mismatch_with_the_report", function()
  if not torch then return "skip", python .. " cannot import torch" end
  local dir = tempdir()
  local s = session(dir)
  s:load_forward(repo .. "/examples/gelu.py")
  local id = s:generate()
  -- A launcher that doubles the gradient: the whole-stub check runs the module as Python does.
  local path = dir .. "/snapshots/" .. id .. "/backward.py"
  local source = read(path)
  local returned = "return (_as_dtype(d_x, x),)"
  local at = source:find(returned, 1, true)
  check(at, "the launcher's return")
  write(path, source:sub(1, at - 1) .. "return (_as_dtype(2 * d_x, x),)" .. source:sub(at + #returned))
  local err = raises(s.verify, s, {cpu = true, dims = '[{"n": 1000}]'})
  expect_tad_error(err, "TAD_ERR_MISMATCH")
  check(err.report, "the report comes with the error")
  eq(tad.report_passed(err.report), false, "passed")
  eq(tad.report_number(err.report, "summary.failed"), 1, "summary.failed")
  s:close()
  rmdir(dir)
end)

test("the_progress_function_sees_stages_and_false_cancels", function()
  if not torch then return "skip", python .. " cannot import torch" end
  local dir = tempdir()
  local stages, cancel = {}, true
  local s = session(dir, {progress = function(stage, message, fraction)
    check(type(message) == "string" and (fraction == nil or type(fraction) == "number"), "arguments")
    stages[stage] = true
    if cancel then return false end
  end})
  s:load_forward(repo .. "/examples/gelu.py")
  expect_tad_error(raises(s.generate, s), "TAD_ERR_CANCELLED")
  eq(s:snapshots(), "[]", "a cancelled generate leaves the session as it was")
  cancel = false
  s:generate()
  check(stages.trace and stages.generate, "stages trace and generate")
  s:close()
  rmdir(dir)
end)

test("an_error_in_the_progress_function_is_raised_after_the_call", function()
  if not torch then return "skip", python .. " cannot import torch" end
  local dir = tempdir()
  local mine, calls_after = {tag = "mine"}, 0
  local explode, exploded = true, false
  local s
  s = session(dir, {progress = function()
    if exploded then calls_after = calls_after + 1 end
    if explode then
      exploded = true
      error(mine)
    end
  end})
  s:load_forward(repo .. "/examples/gelu.py")
  local err = raises(s.generate, s)
  check(rawequal(err, mine), "the progress function's own error object: " .. tostring(err))
  eq(calls_after, 0, "calls after the error")
  explode = false
  eq(s:snapshots(), "[]", "snapshots")
  -- Calling the session from its own progress function is refused, and that refusal is raised.
  local reentered
  s:close()
  s = session(dir, {progress = function() reentered = true; s:snapshots() end})
  s:load_forward(repo .. "/examples/gelu.py")
  err = raises(s.generate, s)
  check(reentered, "the progress function ran")
  expect_tad_error(err, "TAD_ERR_STATE")
  eq(err.message, "tad.Session: a call on this session is running", "message")
  s:close()
  rmdir(dir)
end)

test("calls_run_inside_coroutines", function()
  if not torch then return "skip", python .. " cannot import torch" end
  local dir = tempdir()
  local seen = 0
  local s = session(dir, {progress = function() seen = seen + 1 end})
  s:load_forward(repo .. "/examples/gelu.py")
  local co = coroutine.create(function()
    local id = s:generate()
    coroutine.yield(id)
    return tad.report_passed(s:verify{cpu = true, dims = '[{"n": 1000}]'})
  end)
  local ok, id = coroutine.resume(co)
  check(ok and id, tostring(id))
  local passed
  ok, passed = coroutine.resume(co)
  check(ok, tostring(passed))
  eq(passed, true, "passed")
  check(seen > 0, "progress reached the function")
  s:close()
  rmdir(dir)
end)

test("retrieve_and_dataset_list", function()
  local dir = tempdir()
  local s = session(dir)
  local where = {dataset = repo .. "/dataset", cache = dir .. "/cache"}
  expect_tad_error(raises(s.retrieve, s, where), "TAD_ERR_STATE")
  s:load_forward(repo .. "/examples/layernorm.py")
  local report = s:retrieve(where)
  check(report:find('"kind":"retrieve"', 1, true), report)
  local first = report:match('"results":%[(.-)}}')
  check(first and first:find('"family":"norm"', 1, true), report)
  local options = {topk = 2, exclude = {"norm", "softmax"}, dataset = where.dataset, cache = where.cache}
  report = s:retrieve(options)
  check(report:find('"rank":2', 1, true) and not report:find('"rank":3', 1, true), report)
  check(not report:match('"results":(.*)'):find("norm", 1, true), report)
  local err = raises(s.retrieve, s, {topk = 2, exlude = "x"})
  eq(err.message, "retrieve: unknown option 'exlude'", "message")
  err = raises(s.retrieve, s, {exclude = {"a", 3}})
  eq(err.message, "option 'exclude' must hold strings", "message")
  local listing = tad.dataset_list(where)
  check(listing:find('"name":"rmsnorm"', 1, true), listing)
  check(listing:find('"kind":"hand-written"', 1, true), listing)
  s:close()
  rmdir(dir)
end)

local pattern = arg[1]
local failed, skipped, passed = 0, 0, 0
for _, name in ipairs(order) do
  if not pattern or name:find(pattern) then
    local ok, result, why = xpcall(tests[name], debug.traceback)
    if not ok then
      failed = failed + 1
      print("[FAIL] " .. name .. ": " .. tostring(result))
    elseif result == "skip" then
      skipped = skipped + 1
      print("[SKIP] " .. name .. ": " .. why)
    else
      passed = passed + 1
      print("[ OK ] " .. name)
    end
  end
end
print(string.format("%d passed, %d failed, %d skipped", passed, failed, skipped))
os.exit(failed == 0 and 1 == 1 or false)
