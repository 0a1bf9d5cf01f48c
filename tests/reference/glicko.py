#!/usr/bin/env python3
"""Glicko-1 from Glickman's paper ("Parameter estimation in large dynamic paired comparison
experiments", 1999; the formulas of his "The Glicko system" note), one rating period per game as
ChessArena's appendix C rates players, written independently of arena's Rust code (standard
library only).

Reads {"games": [[white, black, white_score], ...], "initial_rating": r0, "initial_rd": rd0,
"min_rd": floor} on stdin and prints {name: [rating, rd]} after every game is rated in order.
Per period (one game), for a player of rating r and deviation RD against an opponent r_j, RD_j:
  q = ln 10 / 400, g(RD_j) = 1 / sqrt(1 + 3 q^2 RD_j^2 / pi^2),
  E = 1 / (1 + 10^(-g(RD_j) (r - r_j) / 400)), clipped to [0.001, 0.999] as ChessArena does,
  d^2 = 1 / (q^2 g(RD_j)^2 E (1 - E)),
  r' = r + q / (1 / RD^2 + 1 / d^2) g(RD_j) (s - E),
  RD' = sqrt(1 / (1 / RD^2 + 1 / d^2)), floored at min_rd (ChessArena's floor).
Both players are updated from their values before the game; RD does not grow between games.
"""
import json
import math
import sys

Q = math.log(10) / 400


def g(rd):
    return 1 / math.sqrt(1 + 3 * Q * Q * rd * rd / (math.pi ** 2))


def side(r, rd, rj, rdj, s, floor):
    e = 1 / (1 + 10 ** (-g(rdj) * (r - rj) / 400))
    e = min(max(e, 0.001), 0.999)
    d2 = 1 / (Q * Q * g(rdj) ** 2 * e * (1 - e))
    precision = 1 / (rd * rd) + 1 / d2
    return r + Q / precision * g(rdj) * (s - e), max(math.sqrt(1 / precision), floor)


data = json.load(sys.stdin)
players = {}
for white, black, score in data["games"]:
    for p in (white, black):
        players.setdefault(p, (data["initial_rating"], data["initial_rd"]))
    (rw, dw), (rb, db) = players[white], players[black]
    players[white] = side(rw, dw, rb, db, score, data["min_rd"])
    players[black] = side(rb, db, rw, dw, 1 - score, data["min_rd"])
print(json.dumps(players))
