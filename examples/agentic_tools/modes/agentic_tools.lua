-- The built-in tools of the agentic mode (scripts/modes/agentic_tools.lua) and one more,
-- get_move_history. Placed beside a tournament as modes/agentic_tools.lua, this file replaces the
-- built-in one for that tournament's agentic players with `actions = "tools"`.
--
-- The tools of the agentic mode with `actions = "tools"`: the actions of the text protocol offered
-- through the provider's native tool calling. Each tool has a name, a description for the model,
-- its parameters as a JSON schema, and `answer(ctx, args)`, the text sent back as the call's
-- result (`args` is the call's arguments, decoded). make_move has no `answer`: the mode plays the
-- move or refuses it, as in the text protocol.
--
-- `offered(options)` says when a built-in tool is offered (the mode's `setup` decides, as for the
-- text actions); a tool without it is offered at every ply. To add a tool, copy this file into
-- your script's folder as `modes/agentic_tools.lua` and add an entry: every call of it is stored
-- with the tool's name as its outcome, and it spends no attempt.
local prompts = require("prompts.agentic")

local NO_ARGUMENTS = { type = "object", properties = {} }

return {
  {
    name = "get_current_board",
    description = "See the board as it stands now.",
    parameters = NO_ARGUMENTS,
    answer = function(ctx)
      return prompts.board(ctx)
    end,
  },
  {
    name = "get_legal_moves",
    description = "List the moves you may play, in UCI notation.",
    parameters = NO_ARGUMENTS,
    answer = function(ctx)
      return prompts.legal_moves(ctx)
    end,
  },
  {
    name = "do_reflection",
    description = "Take a moment to plan before you choose a move.",
    parameters = NO_ARGUMENTS,
    answer = function(ctx)
      return prompts.reflection(ctx)
    end,
  },
  {
    name = "get_move_history",
    description = "List the moves played so far in this game, in SAN, numbered.",
    parameters = NO_ARGUMENTS,
    answer = function(ctx)
      if #ctx.history_san == 0 then
        return "No moves have been played yet."
      end
      return prompts.move_pairs(ctx, ctx.history_san)
    end,
  },
  {
    name = "make_move",
    description = "Play a move. Your turn ends when the move is legal.",
    parameters = {
      type = "object",
      properties = {
        move = {
          type = "string",
          description = "The move in UCI notation: from-square, to-square, and a promotion "
            .. "letter when a pawn promotes, e.g. e2e4 or e7e8q.",
        },
      },
      required = { "move" },
    },
  },
}
