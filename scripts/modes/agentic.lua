-- Agentic play (LLM Chess, in our own words): each ply opens a fresh dialog in which the model
-- answers with one action at a time (get_current_board, get_legal_moves, optionally do_reflection,
-- make_move <uci>); arena answers each action until a move is made.
--
-- Limits per ply, enforced by Rust: `max_turns` model replies and `max_attempts` failed actions
-- (a reply that is no action, or a move that cannot be played). Exceeding them loses the game
-- (terminations `max_turns` and `too_many_wrong_actions`). Every wrong action is stored with the
-- outcome `wrong_action`, every refused move with `wrong_move`; answered actions with their name.
--
-- `actions = "tools"` offers the same actions as the provider's native tools (defined beside this
-- file in modes/agentic_tools.lua, where a user may add one): same limits, same outcomes; a reply
-- that calls no tool, an unknown one, or one with unreadable arguments is a wrong action.
--
-- Switches for the paper's ablations: `board` (unicode, ascii, fen, fen_pgn), `board_in_prompt`,
-- `legal_moves_in_prompt`, `only_make_move`, `legal_moves = false`, `previous_moves`, `memory`,
-- `reflection`, and `single_request` (one request per ply, no actions but make_move).
local prompts = require("prompts.agentic")
local actions = require("parsers.actions")
local tools = require("modes.agentic_tools")

local M = {}

--- The module holding this mode's words: what a player's `prompt = "..."` stands in for.
M.prompt_module = "prompts.agentic"

-- Using up `max_attempts` at a ply ends the game with LLM Chess's own termination.
M.exhausted = "too_many_wrong_actions"

M.defaults = {
  board = "unicode", -- how the board is shown: "unicode", "ascii", "fen" or "fen_pgn"
  board_in_prompt = false, -- always show the board; get_current_board is then not offered
  legal_moves_in_prompt = false, -- always list the legal moves; get_legal_moves is then not offered
  only_make_move = false, -- board and legal moves in the prompt, make_move the only action
  legal_moves = true, -- false: legal moves are neither offered nor shown
  previous_moves = false, -- start the prompt with the game's moves so far (UCI)
  memory = false, -- carry the previous ply's dialog over (LLM Chess starts every ply afresh)
  reflection = false, -- offer do_reflection
  single_request = false, -- one request per ply with everything in it; the reply ends with make_move
  rule = "llm_chess", -- how actions are read: "llm_chess" or "strict" (see parsers/actions.lua)
  actions = "text", -- "text": actions written in the reply; "tools": the provider's tool calls
  max_attempts = 3, -- failed actions per ply before the game is lost
  max_turns = 10, -- model replies per ply before the game is lost
}

--- The values a text option may take (a parser option may also be a table: see parsers/move.lua).
M.choices = {
  board = { "unicode", "ascii", "fen", "fen_pgn" },
  rule = { "llm_chess", "strict" },
  actions = { "text", "tools" },
}

--- Which actions the model is offered and what the prompt shows by itself.
function M.setup(options)
  local board_shown = options.board_in_prompt or options.only_make_move or options.single_request
  local legal_shown = options.legal_moves
    and (options.legal_moves_in_prompt or options.only_make_move or options.single_request)
  local offered = {
    get_current_board = not board_shown,
    get_legal_moves = options.legal_moves and not legal_shown,
    do_reflection = options.reflection and not options.single_request,
    make_move = true,
  }
  return offered, { board = board_shown, legal_moves = legal_shown }
end

local function legal_set(ctx)
  local set = {}
  for _, uci in ipairs(ctx.legal_uci) do
    set[uci] = true
  end
  return set
end

local BOARDS = { unicode = true, ascii = true, fen = true, fen_pgn = true }
local RULES = { llm_chess = true, strict = true }
local ACTIONS = { text = true, tools = true }
local BUILT_IN = { get_current_board = true, get_legal_moves = true, do_reflection = true, make_move = true }

-- Misspelled option values fail when the script is checked, not in the middle of a game.
local function check(o)
  if not BOARDS[o.board] then
    error("option `board` cannot be `" .. tostring(o.board) .. "` (expected unicode, ascii, fen or fen_pgn)")
  end
  if not RULES[o.rule] then
    error("option `rule` cannot be `" .. tostring(o.rule) .. "` (expected llm_chess or strict)")
  end
  if not ACTIONS[o.actions] then
    error("option `actions` cannot be `" .. tostring(o.actions) .. "` (expected text or tools)")
  end
  if o.actions == "tools" and o.single_request then
    error("option `actions = \"tools\"` cannot be combined with `single_request` (it takes no actions but make_move in the text)")
  end
  if o.actions == "tools" and o.memory then
    error("option `actions = \"tools\"` cannot be combined with `memory` yet (a carried-over dialog holds no tool calls)")
  end
end

--- The tools offered at this ply: the built-in ones the options offer, and every added one.
local function offered_tools(offered)
  local list = {}
  for _, tool in ipairs(tools) do
    if not BUILT_IN[tool.name] or offered[tool.name] then
      table.insert(list, tool)
    end
  end
  return list
end

--- The tools as a request offers them: name, description and parameters.
local function tool_specs(list)
  local specs = {}
  for _, tool in ipairs(list) do
    table.insert(specs, { name = tool.name, description = tool.description, parameters = tool.parameters })
  end
  return specs
end

local function tool_names(list)
  local names = {}
  for _, tool in ipairs(list) do
    table.insert(names, tool.name)
  end
  return names
end

local function tools_start(ctx)
  local offered, shown = M.setup(ctx.options)
  local list = offered_tools(offered)
  return {
    messages = { { role = "user", content = prompts.tools_kickoff(ctx, tool_names(list), shown) } },
    tools = tool_specs(list),
  }
end

-- A reply through tools: its first call is the action; any further calls of the same reply are
-- answered with a note and not carried out (one action per turn, as in the text protocol).
local function tools_reply(ctx, calls)
  local offered = M.setup(ctx.options)
  local list = offered_tools(offered)
  local names = tool_names(list)
  local others = prompts.tools_not_carried_out(ctx)
  local call = calls[1]
  local asked = ctx.dialog[#ctx.dialog - 1]
  if not call then
    if asked ~= nil and asked.content == prompts.reflection(ctx) then
      -- Notes written after do_reflection are never a wrong action, as in the text protocol.
      return { say = prompts.tools_after_reflection(ctx), outcome = "reflection_notes" }
    end
    return { retry = prompts.tools_wrong_action(ctx, names, { kind = "no_call" }), outcome = "wrong_action" }
  end
  local tool
  for _, t in ipairs(list) do
    if t.name == call.name then
      tool = t
    end
  end
  if not tool then
    return {
      retry = prompts.tools_wrong_action(ctx, names, { kind = "unknown_tool", name = call.name }),
      outcome = "wrong_action",
      other_calls = others,
    }
  end
  local text = call.arguments
  if text == nil or text:match("^%s*$") then
    text = "{}"
  end
  local ok, args = pcall(arena.json.decode, text)
  if not ok or type(args) ~= "table" then
    return {
      retry = prompts.tools_wrong_action(ctx, names, { kind = "bad_arguments", name = call.name }),
      outcome = "wrong_action",
      other_calls = others,
    }
  end
  if tool.name == "make_move" then
    local uci = args.move
    if type(uci) ~= "string" then
      return {
        retry = prompts.tools_wrong_action(ctx, names, { kind = "bad_arguments", name = call.name }),
        outcome = "wrong_action",
        other_calls = others,
      }
    end
    if legal_set(ctx)[uci] then
      return { move = uci, outcome = "move" }
    end
    local well_formed = uci:match("^[a-h][1-8][a-h][1-8][qrbn]?$") ~= nil
    return {
      retry = prompts.wrong_move(ctx, uci, well_formed),
      outcome = "wrong_move",
      candidate = uci,
      other_calls = others,
    }
  end
  return { say = tool.answer(ctx, args), outcome = tool.name, other_calls = others }
end

function M.start(ctx)
  local o = ctx.options
  check(o)
  if o.single_request then
    return {
      { role = "system", content = prompts.single_system(ctx) },
      { role = "user", content = prompts.single_user(ctx) },
    }
  end
  if o.actions == "tools" then
    return tools_start(ctx)
  end
  local offered, shown = M.setup(o)
  local messages = {}
  if o.memory then
    for _, m in ipairs(ctx.previous_dialog) do
      table.insert(messages, { role = m.role, content = m.content })
    end
  end
  table.insert(messages, { role = "user", content = prompts.kickoff(ctx, offered, shown) })
  return messages
end

local function single_reply(ctx, text)
  local legal = legal_set(ctx)
  local move, candidate = actions.last_legal_move(text, legal)
  if move then
    return { move = move, outcome = "move" }
  end
  -- A fresh request with a note (start sees attempt > 1), as the one-request harness does.
  return {
    retry = true,
    reset = true,
    outcome = candidate and "wrong_move" or "wrong_action",
    candidate = candidate,
  }
end

function M.reply(ctx, text, calls)
  local o = ctx.options
  if o.single_request then
    return single_reply(ctx, text)
  end
  if o.actions == "tools" then
    return tools_reply(ctx, calls or {})
  end
  local offered = M.setup(o)
  -- The message before the reply is what arena said last.
  local asked = ctx.dialog[#ctx.dialog - 1]
  local after_reflection = asked ~= nil and asked.content == prompts.reflection(ctx)
  local action, err = actions.parse(text, offered, o.rule)
  if after_reflection then
    -- The reply to the reflection prompt. LLM Chess answers a board or legal-moves request and
    -- meets anything else, a make_move included, with its follow-up text; the strict rule
    -- carries out any action and follows up only on notes. Neither is a wrong action.
    local shows = action and (action.name == "get_current_board" or action.name == "get_legal_moves")
    if not action or (o.rule == "llm_chess" and not shows) then
      return { say = prompts.after_reflection(ctx, offered), outcome = "reflection_notes" }
    end
  end
  if not action then
    if err.kind == "malformed_move" then
      return {
        retry = prompts.wrong_move(ctx, err.candidate or "", false),
        outcome = "wrong_move",
        candidate = err.candidate,
      }
    end
    return { retry = prompts.wrong_action(ctx, offered, err), outcome = "wrong_action" }
  end
  if action.name == "get_current_board" then
    return { say = prompts.board(ctx), outcome = "get_current_board" }
  elseif action.name == "get_legal_moves" then
    return { say = prompts.legal_moves(ctx), outcome = "get_legal_moves" }
  elseif action.name == "do_reflection" then
    return { say = prompts.reflection(ctx), outcome = "do_reflection" }
  end
  -- make_move: the null move 0000 is never in the legal list, so it is always refused.
  local uci = action.uci
  if legal_set(ctx)[uci] then
    return { move = uci, outcome = "move" }
  end
  local well_formed = uci:match("^[a-h][1-8][a-h][1-8][qrbn]?$") ~= nil
  return { retry = prompts.wrong_move(ctx, uci, well_formed), outcome = "wrong_move", candidate = uci }
end

return M
