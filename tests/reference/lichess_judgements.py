#!/usr/bin/env python3
"""lichess's move judgements (?!, ?, ??) and their per-colour counts, from the rules lichess
publishes in lila (`modules/tree/src/main/Advice.scala`, `WinPercent.scala`, the `Analysis`
summary) and its fishnet `AnalysisBuilder`, written independently of arena's Rust code (standard
library only).

Reads {"games": [game, ...]} on stdin, where a game is
  {"first": "white" | "black", "start": score (optional), "moves": [move, ...]}
and a move is {"best": bool, "after": score}: whether the move was the engine's first choice in
the position before it, and the engine's score of the position after it. A score is {"cp": n}
or {"mate": n}, always from White's side (mate > 0: White mates); {"mate": 0} is a checkmated
position. Prints {"games": [{"judgements": [...], "counts": {...}}, ...]}: one entry per move
("?!", "?", "??" or null) and, per colour, the number of inaccuracies, mistakes and blunders.

lichess's pipeline, as its sources describe it:
- The analysis holds one evaluation per position. A checkmated position has none (it is dropped
  before the evaluations are paired), so a mating move gets no entry and no judgement.
- Each move's entry carries the evaluation after it (White's side) and a "variation" only when
  the move was not the engine's first choice; a move without a variation is not judged.
- The evaluation before the first move is a fixed 15 cp for White (lichess's initial eval),
  whatever the position; "start" overrides it (arena's rule for games that do not begin at the
  standard start).
- A move is judged from the previous entry and its own:
  1. both in centipawns: winning chances w(cp) = 2 / (1 + exp(-0.00368208 cp)) - 1, cp not
     clamped, w clamped to [-1, 1]; the mover's loss is w(before) - w(after) from White's side,
     sign flipped for Black; a loss of at least 0.3 is a blunder, 0.2 a mistake, 0.1 an
     inaccuracy;
  2. otherwise, the mate rules, everything from the mover's side, a missing centipawn score
     counting as 0:
     - no mate before, being mated after ("checkmate is now unavoidable"): an inaccuracy if the
       centipawns before were below -999, a mistake below -700, else a blunder;
     - a mate for the mover before and none after, or being mated after ("lost forced
       checkmate sequence"): an inaccuracy if the centipawns after are above 999, a mistake
       above 700, else a blunder;
     - anything else (a longer mate, a mate kept, being mated sooner): no judgement.
"""
import json
import math
import sys

LEVELS = [(0.3, "??"), (0.2, "?"), (0.1, "?!")]
NAMES = {"?!": "inaccuracies", "?": "mistakes", "??": "blunders"}


def chances(cp):
    value = 2 / (1 + math.exp(-0.00368208 * cp)) - 1
    return max(-1.0, min(1.0, value))


def for_mover(score, white_moved):
    """The score from the mover's side: (cp or None, mate or None)."""
    sign = 1 if white_moved else -1
    cp = score.get("cp")
    mate = score.get("mate")
    return (None if cp is None else sign * cp, None if mate is None else sign * mate)


def judge(prev, info, white_moved):
    if "cp" in prev and "cp" in info:
        loss = chances(prev["cp"]) - chances(info["cp"])
        if not white_moved:
            loss = -loss
        for cutoff, glyph in LEVELS:
            if loss >= cutoff:
                return glyph
        return None
    prev_cp, prev_mate = for_mover(prev, white_moved)
    next_cp, next_mate = for_mover(info, white_moved)
    prev_cp = prev_cp or 0
    next_cp = next_cp or 0
    if prev_mate is None and next_mate is not None and next_mate < 0:
        return "?!" if prev_cp < -999 else "?" if prev_cp < -700 else "??"
    lost = prev_mate is not None and prev_mate > 0 and (next_mate is None or next_mate < 0)
    if lost:
        return "?!" if next_cp > 999 else "?" if next_cp > 700 else "??"
    return None


def analyse(game):
    white_to_move = game["first"] == "white"
    prev = game.get("start", {"cp": 15})
    judgements = []
    counts = {
        colour: {name: 0 for name in NAMES.values()} for colour in ("white", "black")
    }
    for move in game["moves"]:
        after = move["after"]
        if after.get("mate") == 0:
            # The checkmated position has no evaluation: the move has no entry.
            judgements.append(None)
            white_to_move = not white_to_move
            continue
        glyph = None if move["best"] else judge(prev, after, white_to_move)
        judgements.append(glyph)
        if glyph is not None:
            counts["white" if white_to_move else "black"][NAMES[glyph]] += 1
        prev = after
        white_to_move = not white_to_move
    return {"judgements": judgements, "counts": counts}


data = json.load(sys.stdin)
json.dump({"games": [analyse(g) for g in data["games"]]}, sys.stdout)
