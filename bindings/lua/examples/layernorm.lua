-- The tad loop from Lua on examples/layernorm.py: generate a backward, verify it on the CPU
-- interpreter (float64, finite differences), snapshot it, and with --gpu verify and benchmark it
-- on the GPU too.
--   LUA_CPATH=build/lua/?.so TAD_PYTHON=/usr/bin/python3 lua5.4 bindings/lua/examples/layernorm.lua [--gpu] [FORWARD.py]
local tad = require("tad")

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local forward, gpu = here .. "/../../../examples/layernorm.py", false
for _, a in ipairs(arg) do
  if a == "--gpu" then gpu = true else forward = a end
end

local work_dir = os.tmpname()
os.remove(work_dir)

local function print_verify(report)
  print(string.format("[%s] %s: %d/%d passed, %d skipped, max rel err %.2e",
    tad.report_passed(report) and "PASS" or "FAIL",
    report:match('"mode"%s*:%s*"(%a+)"'),
    tad.report_number(report, "summary.passed"), tad.report_number(report, "summary.total"),
    tad.report_number(report, "summary.skipped"), tad.report_number(report, "summary.max_rel_err")))
end

local function gpu_steps(s)
  local ok, report = pcall(s.verify, s)
  if not ok and report.status == tad.TAD_ERR_NO_GPU then
    print("[SKIP] no GPU: " .. report.message)
    return
  elseif not ok then
    error(report, 0)
  end
  print_verify(report)
  local bench = s:bench()
  print("median speedup vs reference: " .. tostring(select(2, pcall(tad.report_number, bench,
    "summary.median_bwd_speedup_vs_ref"))))
end

local function run()
  print("libtad " .. tad.version())
  local s <close> = tad.Session{work_dir = work_dir, progress = function(stage, message)
    print("[" .. stage .. "] " .. message)
  end}
  s:load_forward(forward)
  local id = s:generate()
  local _, lines = s:candidate_source():gsub("\n", "")
  print(string.format("generated %s (%d lines of Python)", id, lines))
  local ok, report = pcall(s.verify, s, {cpu = true})
  if not ok then
    if type(report) == "table" and report.report then print_verify(report.report) end
    error(report, 0)
  end
  print_verify(report)
  if gpu then gpu_steps(s) end
  print("snapshot " .. s:snapshot("verified"))
  for entry in s:snapshots():gmatch("{(.-)}") do
    print("  " .. entry:match('"id"%s*:%s*"([^"]*)"') .. " passed " .. (entry:match('"passed"%s*:%s*(%a+)') or "?"))
  end
end

local ok, err = pcall(run)
os.execute("rm -rf '" .. work_dir .. "'")
if not ok then
  io.stderr:write("layernorm.lua: " .. tostring(err) .. "\n")
  os.exit(1)
end
