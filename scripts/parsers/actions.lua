-- Reads one agentic action (get_current_board, get_legal_moves, do_reflection, make_move <move>)
-- out of a model's reply, with one of two rules, chosen by the mode's `rule` option:
--   "llm_chess": LLM Chess's matching. The reply is lower-cased; the first offered action name
--                found anywhere in it wins, checked in the order board, legal moves, reflection;
--                otherwise the first `make_move ` followed by 4 or 5 letters or digits is the move.
--                A reply that mentions get_current_board while thinking aloud therefore asks for
--                the board, even if it also makes a move: that is their behaviour, kept on purpose.
--   "strict":    the reply must name exactly one action, as written (lower case), and make_move
--                must be followed by one well-formed UCI move.
-- Whether a move is legal is the mode's business: the parser only reads what was asked for. So is
-- the reply to the reflection prompt, which LLM Chess reads differently (modes/agentic.lua).
local M = {}

--- Every action name, in the order the llm_chess rule checks them (make_move last).
M.NAMES = { "get_current_board", "get_legal_moves", "do_reflection", "make_move" }

-- Tags that end a model's inline thinking. LLM Chess drops everything up to the first of them.
local THINKING_ENDS = { "</think>", "◁/think▷", "</reasoning>" }

--- Drops inline thinking that the HTTP client did not already split off (it handles <think>
--- blocks; some models close with other tags).
function M.strip_thinking(text)
  local cut
  for _, tag in ipairs(THINKING_ENDS) do
    local _, e = text:find(tag, 1, true)
    if e and (not cut or e < cut) then
      cut = e
    end
  end
  if cut then
    text = text:sub(cut + 1)
  end
  return (text:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function llm_chess(text, offered)
  local lower = text:lower()
  for _, name in ipairs({ "get_current_board", "get_legal_moves", "do_reflection" }) do
    if offered[name] and lower:find(name, 1, true) then
      return { name = name }
    end
  end
  local arg = lower:match("make_move (%w%w%w%w%w?)")
  if arg then
    return { name = "make_move", uci = arg }
  end
  return nil, { kind = "no_action", message = "no action found" }
end

local function strict(text, offered)
  local found = {}
  for _, name in ipairs(M.NAMES) do
    local start = 1
    while true do
      local s, e = text:find(name, start, true)
      if not s then
        break
      end
      table.insert(found, { name = name, at = s, stop = e })
      start = e + 1
    end
  end
  if #found == 0 then
    return nil, { kind = "no_action", message = "no action found" }
  end
  if #found > 1 then
    return nil, { kind = "several_actions", message = "more than one action named" }
  end
  local name = found[1].name
  if not offered[name] then
    return nil, { kind = "not_offered", message = name .. " is not one of the actions offered", candidate = name }
  end
  if name ~= "make_move" then
    return { name = name }
  end
  local rest = text:sub(found[1].stop + 1)
  local uci = rest:match("^%s+([a-h][1-8][a-h][1-8][qrbn]?)%f[^%w]")
  if uci then
    return { name = "make_move", uci = uci }
  end
  local token = rest:match("^%s*(%S*)")
  return nil, { kind = "malformed_move", message = "make_move needs one move in UCI notation", candidate = token }
end

--- Reads the action in `text`. `offered` is a set {name = true} of the actions the model was
--- offered; `rule` is "llm_chess" or "strict". Returns the action {name, uci?}, or nil and an
--- error {kind, message, candidate?} with kind "no_action", "several_actions", "not_offered" or
--- "malformed_move".
function M.parse(text, offered, rule)
  text = M.strip_thinking(text)
  if rule == "strict" then
    return strict(text, offered)
  elseif rule == "llm_chess" then
    return llm_chess(text, offered)
  end
  error("unknown action rule `" .. tostring(rule) .. "` (expected \"llm_chess\" or \"strict\")")
end

--- The one-request-per-ply rule (LLM Chess's simple harness): the last `make_move <move>` whose
--- move is legal, else the last bare UCI move in the text that is legal. `legal` is a set
--- {uci = true}. Returns the move, or nil and the last candidate seen (legal or not).
function M.last_legal_move(text, legal)
  text = M.strip_thinking(text):lower()
  local chosen, candidate
  for uci in text:gmatch("make_move%s*[:=]?%s*([a-h][1-8][a-h][1-8][qrbn]?)") do
    candidate = uci
    if legal[uci] then
      chosen = uci
    end
  end
  if chosen then
    return chosen
  end
  for uci in text:gmatch("%f[%w]([a-h][1-8][a-h][1-8][qrbn]?)%f[^%w]") do
    candidate = candidate or uci
    if legal[uci] then
      chosen = uci
    end
  end
  if chosen then
    return chosen
  end
  return nil, candidate
end

return M
