-- The words of the agentic mode: the message that opens each ply, the answers to each action, and
-- what the model hears after a wrong action or move. Same information and answer contract as LLM
-- Chess, in our own words; paste their exact texts here if you need them.
local P = {}
local chess960 = require("prompts.chess960")

local function side_name(ctx)
  return ctx.side == "white" and "White" or "Black"
end

--- The game's moves as numbered pairs, "1. e2e4 e7e5, 2. g1f3", from the start position's side
--- and move number.
function P.move_pairs(ctx, moves)
  local fields = {}
  for field in ctx.start_fen:gmatch("%S+") do
    table.insert(fields, field)
  end
  local number = tonumber(fields[6]) or 1
  local pairs_out = {}
  local i = 1
  if fields[2] == "b" and #moves > 0 then
    table.insert(pairs_out, number .. ". ... " .. moves[1])
    number = number + 1
    i = 2
  end
  while i <= #moves do
    local pair = number .. ". " .. moves[i]
    if moves[i + 1] then
      pair = pair .. " " .. moves[i + 1]
    end
    table.insert(pairs_out, pair)
    number = number + 1
    i = i + 2
  end
  return table.concat(pairs_out, ", ")
end

--- PGN movetext of the game so far (SAN, numbered), for the "fen_pgn" board.
local function movetext(ctx)
  local text = P.move_pairs(ctx, ctx.history_san):gsub(", ", " ")
  return text
end

--- The board in the representation the `board` option names.
function P.board(ctx)
  local style = ctx.options.board
  if style == "fen" then
    return ctx.fen
  elseif style == "fen_pgn" then
    local moves = movetext(ctx)
    return ctx.fen .. "\n\nThe game so far (PGN): " .. (moves ~= "" and moves or "no moves yet")
  elseif style == "unicode" or style == "ascii" then
    return arena.board.render(ctx.fen, style)
  end
  error("unknown board representation `" .. tostring(style) .. "` (expected unicode, ascii, fen or fen_pgn)")
end

--- The answer to get_legal_moves: the UCI moves, comma-separated.
function P.legal_moves(ctx)
  return table.concat(ctx.legal_uci, ",")
end

local DESCRIPTIONS = {
  get_current_board = "get_current_board: see the board as it stands now",
  get_legal_moves = "get_legal_moves: list the moves you may play, in UCI notation",
  do_reflection = "do_reflection: take a moment to plan before you choose",
  make_move = "make_move <move>: play a move in UCI notation (from-square, to-square, and a "
    .. "promotion letter when a pawn promotes), e.g. make_move e2e4",
}

local function offered_list(offered)
  local names = {}
  for _, name in ipairs({ "get_current_board", "get_legal_moves", "do_reflection", "make_move" }) do
    if offered[name] then
      table.insert(names, name == "make_move" and "make_move <move>" or name)
    end
  end
  return table.concat(names, ", ")
end

-- What the opening message of a ply shows by itself, before it asks for a move: the moves so far
-- (with `previous_moves`), and the board and legal moves when `shown` says the prompt carries them.
local function shown_parts(ctx, shown)
  local parts = {}
  if ctx.options.previous_moves then
    local moves = #ctx.history_uci > 0 and P.move_pairs(ctx, ctx.history_uci) or "none yet"
    table.insert(parts, "The moves so far (UCI): " .. moves)
  end
  if shown.board then
    table.insert(parts, "The board now:\n" .. P.board(ctx))
  end
  if shown.legal_moves then
    table.insert(parts, "Your legal moves (UCI): " .. P.legal_moves(ctx))
  end
  return parts
end

--- The message that opens a ply. `shown` says what the prompt carries by itself:
--- {board = bool, legal_moves = bool}.
function P.kickoff(ctx, offered, shown)
  local parts = shown_parts(ctx, shown)
  local lines = {
    "You are playing chess as " .. side_name(ctx) .. ", and it is your move. "
      .. "Answer with exactly one of these actions, written as shown:",
  }
  for _, name in ipairs({ "get_current_board", "get_legal_moves", "do_reflection", "make_move" }) do
    if offered[name] then
      table.insert(lines, "- " .. DESCRIPTIONS[name])
    end
  end
  table.insert(lines, "Your turn ends when you make a legal move.")
  table.insert(parts, table.concat(lines, "\n"))
  -- Moves are UCI in every variant of the mode.
  chess960.add(parts, ctx, "uci")
  return table.concat(parts, "\n\n")
end

--- The answer to do_reflection.
function P.reflection(_ctx)
  return table.concat({
    "Take a moment to think before you choose. You might:",
    "- pick out the few moves that look most promising;",
    "- work out what each of them changes on the board;",
    "- consider how your opponent could answer each one;",
    "- ask which plan suits this position;",
    "- then rank your candidates again.",
    "Write your notes, then answer with an action.",
  }, "\n")
end

--- What the model hears after its reply to the reflection prompt, unless that reply asked for the
--- board or the legal moves (with the strict rule: unless it named an action).
function P.after_reflection(_ctx, offered)
  return "Now that you have thought it over, answer with one action: " .. offered_list(offered)
end

--- What the model hears after a reply that is not an action it can take.
function P.wrong_action(_ctx, offered, err)
  local why = ""
  if err.kind == "several_actions" then
    why = " Your reply named more than one action."
  elseif err.kind == "not_offered" then
    why = " " .. (err.candidate or "That action") .. " is not available here."
  elseif err.kind == "malformed_move" then
    why = " make_move must be followed by one move in UCI notation, such as e2e4."
  end
  return "That is not an action I can carry out." .. why
    .. " Reply with just one action, its name and then its argument after a space: "
    .. offered_list(offered)
end

--- What the model hears after make_move with a move that cannot be played.
function P.wrong_move(ctx, uci, well_formed)
  if not well_formed then
    return "The move was not played: `" .. uci .. "` is not a move in UCI notation."
  end
  return "The move was not played: `" .. uci .. "` is not legal in this position (FEN " .. ctx.fen .. ")."
end

--- The message that opens a ply when the actions are tools: `names` lists the tools offered,
--- `shown` says what the prompt carries by itself ({board = bool, legal_moves = bool}).
function P.tools_kickoff(ctx, names, shown)
  local parts = shown_parts(ctx, shown)
  table.insert(parts, "You are playing chess as " .. side_name(ctx) .. ", and it is your move. "
    .. "Act through your tools (" .. table.concat(names, ", ") .. "), one call at a time. "
    .. "Your turn ends when you make a legal move with make_move.")
  chess960.add(parts, ctx, "uci")
  return table.concat(parts, "\n\n")
end

--- With tools: what the model hears after its notes on the reflection prompt.
function P.tools_after_reflection(_ctx)
  return "Now that you have thought it over, call one of your tools."
end

--- With tools: the result of every call after the first in one reply.
function P.tools_not_carried_out(_ctx)
  return "Not carried out: call one tool at a time."
end

--- With tools: what the model hears after a reply that calls no tool it can use. `err.kind` is
--- "no_call", "unknown_tool" or "bad_arguments"; `err.name` the tool it called.
function P.tools_wrong_action(_ctx, names, err)
  local why
  if err.kind == "unknown_tool" then
    why = "There is no tool `" .. tostring(err.name) .. "` here."
  elseif err.kind == "bad_arguments" then
    if err.name == "make_move" then
      why = "make_move needs one argument, `move`, a move in UCI notation such as e2e4."
    else
      why = "The arguments of `" .. tostring(err.name) .. "` are not a JSON object."
    end
  else
    why = "Your reply called no tool."
  end
  return why .. " Act only through your tools, one call at a time: " .. table.concat(names, ", ") .. "."
end

--- The one-request-per-ply variant: the system message.
function P.single_system(_ctx)
  return "You are a strong chess player. You always answer with one legal move."
end

--- The one-request-per-ply variant: everything in one message. After a failed attempt the request
--- is sent again from scratch, with a note that the last reply had no legal move.
function P.single_user(ctx)
  local parts = {
    "You are playing chess as " .. side_name(ctx) .. ". Choose the best legal move.",
    "The board:\n" .. P.board(ctx),
  }
  if ctx.options.board ~= "fen" and ctx.options.board ~= "fen_pgn" then
    table.insert(parts, "FEN: " .. ctx.fen)
  end
  if ctx.options.previous_moves and #ctx.history_uci > 0 then
    table.insert(parts, "The moves so far (UCI): " .. P.move_pairs(ctx, ctx.history_uci))
  end
  if ctx.options.legal_moves then
    table.insert(parts, "Legal moves (UCI): " .. P.legal_moves(ctx))
  end
  chess960.add(parts, ctx, "uci")
  local note = ""
  if ctx.attempt > 1 then
    note = "Your previous answer named no legal move. Choose one move from the position's legal moves. "
  end
  table.insert(parts, note .. "You may think first, but the last line of your answer must read "
    .. "make_move <move>, for example make_move e2e4.")
  return table.concat(parts, "\n\n")
end

return P
