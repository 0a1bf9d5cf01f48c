-- Feedback after a failed answer, by failure kind, shared by the modes that ask for one move per
-- request (blitz, standard, blindfold).
local F = {}

--- What the model is told after a failed attempt, by failure kind.
function F.feedback(ctx, err)
  local notation = ctx.options.notation == "san" and "SAN" or "UCI"
  local hint = ctx.options.legal_moves and " Pick one from the list of legal moves you were given." or ""
  if err.kind == "no_move_found" then
    return "I could not find a move in your answer. Finish with one " .. notation
      .. " move alone inside a ``` fenced block."
  elseif err.kind == "unparseable" then
    return "`" .. (err.candidate or "?") .. "` is not a move in " .. notation
      .. " notation. Put exactly one move inside the ``` fence."
  elseif err.kind == "ambiguous" then
    return "`" .. (err.candidate or "?") .. "` could mean more than one move. Say which piece moves."
  else
    return "`" .. (err.candidate or "?") .. "` is not a legal move in this position." .. hint
  end
end

--- What the model is told after a reply cut off at its token limit before a move, when the mode's
--- `on_cut_off` option is "retry_shorter": the same request, asking for a much shorter answer.
function F.shorter(ctx)
  local notation = ctx.options.notation == "san" and "SAN" or "UCI"
  return "Your answer was cut off at the length limit before it reached a move. Answer again much"
    .. " more briefly: at most two short sentences, then one " .. notation
    .. " move alone inside a ``` fenced block."
end

return F
