-- Shared wording of the fine-grained task prompts: how much the model may write, by play mode.
-- A player in "bullet" mode must answer with the answer alone; every other mode may reason first.
local M = {}

--- A sentence on how to lay out the answer, given the fence content described by `what`.
function M.answer_style(ctx, what)
  if ctx.mode == "bullet" then
    return "Reply with nothing but " .. what .. " inside a ``` fenced block: no explanation."
  end
  return "Work it out step by step if that helps, then finish with " .. what
    .. " inside a ``` fenced block."
end

--- The system message all tasks share.
function M.system()
  return "You are a careful chess assistant. Positions are given in Forsyth-Edwards Notation (FEN); "
    .. "moves are written in UCI (from-square then to-square, e.g. g1f3, with a promotion letter such as e7e8q) "
    .. "unless the question says otherwise."
end

--- Moves joined for a prompt, "none" for an empty list.
function M.list(moves)
  if moves == nil or #moves == 0 then
    return "none"
  end
  return table.concat(moves, ", ")
end

--- The text a task's reader reads. ChessArena's readers (parser "chessarena" or
--- "chessarena_any") read the provider's reasoning followed by the answer, as ChessArena's
--- scripts do (`reasoning_content + content`), so a move written only in the reasoning counts
--- there; arena's own readers read the answer alone.
function M.read_text(reply, ctx)
  local parser = ctx.options and ctx.options.parser
  if (parser == "chessarena" or parser == "chessarena_any") and ctx.reasoning then
    return ctx.reasoning .. reply
  end
  return reply
end

return M
