#!/usr/bin/env python3
"""LLM Chess's Elo against opponents of known Elo ("Algorithm 1" of its paper, as its
data_processing code applies it), written independently of arena's Rust code (standard library
only).

Reads {"blocks": [[opponent_elo, wins, draws, losses], ...], "white_advantage": g} on stdin; the
rated player had one colour throughout. For block k, N_k games and score
S_k = (W_k + D_k / 2) / N_k; E_k(R) = 1 / (1 + 10^((R_k - R) / 400)). The rating R solves
sum_k N_k (S_k - E_k(R)) = 0 (here by bisection on a bracket widened until the sign changes; LLM
Chess uses Brent's method on [min R_k - 800, max R_k + 800], widened up to six times). Its
standard error is 1 / sqrt(I) with the Fisher information I = sum_k N_k E_k (1 - E_k)
(ln 10 / 400)^2 at the root. The colour is applied after solving: the reported Elo is
R + g (LLM Chess: g = +35 for its models, always Black; -35 for its Random calibration, White).
Prints {"elo": R + g, "se": se}.
"""
import json
import math
import sys

data = json.load(sys.stdin)
blocks = [(float(r), w, d, l) for r, w, d, l in data["blocks"] if w + d + l > 0]


def expected(rating, opponent):
    return 1 / (1 + 10 ** ((opponent - rating) / 400))


def f(rating):
    return sum((w + d + l) * ((w + d / 2) / (w + d + l) - expected(rating, r)) for r, w, d, l in blocks)


lo = min(r for r, *_ in blocks) - 800
hi = max(r for r, *_ in blocks) + 800
while f(lo) * f(hi) > 0:
    lo, hi = lo - 800, hi + 800
for _ in range(200):
    mid = (lo + hi) / 2
    if (f(mid) > 0) == (f(lo) > 0):
        lo = mid
    else:
        hi = mid
root = (lo + hi) / 2
info = sum((w + d + l) * expected(root, r) * (1 - expected(root, r)) for r, w, d, l in blocks)
info *= (math.log(10) / 400) ** 2
print(json.dumps({"elo": root + data["white_advantage"], "se": 1 / math.sqrt(info)}))
