-- wrk script: POST /api/plan with the bodies of a file (bench/plan_bodies.py), one per line, in
-- order, every body once (no two alike: the response cache never answers; the offers snapshot
-- and its per-query cache still do). Thread k of T sends lines start+k, start+k+T, ...
-- Usage: wrk -tT ... -s bench/plan_mixed.lua URL/api/plan -- BODIES_FILE T [START]
local next_id = 0
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end

function init(args)
  bodies = {}
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  step = tonumber(args[2]) or 1
  i = (tonumber(args[3]) or 0) + id
end

function request()
  local b = bodies[(i % #bodies) + 1]
  i = i + step
  return wrk.format("POST", "/api/plan", {["Content-Type"] = "application/json"}, b)
end
