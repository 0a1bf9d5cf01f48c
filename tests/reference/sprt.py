#!/usr/bin/env python3
"""Reference figures for arena's experiment statistics, written from the methods' own texts,
not from arena's Rust code (standard library only).

Reads a JSON list of cases on stdin and prints a JSON list of results. A case is
  {"counts": [...], "elo0": e0, "elo1": e1, "alpha": a, "beta": b, "model": "logistic"|"normalized"}
with 5 counts (head-to-head game pairs, scored 0, 1/4, ..., 1; the WL and DD pairs share the
middle bucket as fastchess stores them) or 9 counts (arena's paired differences
x = (1 + s_variant - s_baseline) / 2, scored 0, 1/8, ..., 1).

- The LLR is the generalised one of fastchess (SPRT::getLLR) and fishtest (LLRcalc): empty buckets
  count 1e-3, each hypothesis's likelihood is maximised over distributions on the outcomes whose
  statistic equals the hypothesis (M. Van den Bergh's secular equations: the mean for the
  logistic model, the t-value (mu - 1/2) / sigma for the normalised one),
  LLR = N sum_i phat_i log(p1_i / p0_i). The hypotheses: logistic, the mean L(elo) for a pair
  and (L(elo) + 1/2) / 2 for a paired difference; normalised, t = sqrt(2) elo / (800 / ln 10).
- The bounds are Wald's: log(beta / (1 - alpha)) and log((1 - beta) / alpha).
- Normalised Elo is fastchess's for pentanomial pairs: (s - 1/2) / sqrt(2 v) * 800 / ln 10 with
  s, v the mean and variance of the unit's score (raw counts), and its error half the distance
  between the normalised Elos of s +/- 1.959963984540054 sqrt(v / n).
- The fixed-size p-value of "no better" is 1/2 erfc(z / sqrt 2), z = (s - 1/2) / sqrt(v / n).
- Logistic Elo (pairs only) is -400 log10(1 / s - 1) and its interval the same map of
  s +/- 1.959963984540054 sqrt(v / n).

Roots are found by bisection to machine precision (fastchess uses ITP, fishtest brentq, arena
Brent), so LLRs agree to the roots' accuracy.
"""
import json
import math
import sys

NELO_PER_T = 800 / math.log(10)
Z = 1.959963984540054


def bisect(f, lo, hi):
    flo = f(lo)
    for _ in range(300):
        mid = (lo + hi) / 2
        fm = f(mid)
        if fm == 0:
            return mid
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return (lo + hi) / 2


def secular(a, p):
    lo, hi = -1 / max(a), -1 / min(a)
    eps = 1e-12 * (hi - lo)
    return bisect(lambda x: sum(pi * ai / (1 + x * ai) for ai, pi in zip(a, p)), lo + eps, hi - eps)


def mean_var(a, p):
    mu = sum(ai * pi for ai, pi in zip(a, p))
    return mu, sum(pi * (ai - mu) ** 2 for ai, pi in zip(a, p))


def mle_mean(a, phat, s):
    shifted = [ai - s for ai in a]
    x = secular(shifted, phat)
    return [pi / (1 + x * si) for pi, si in zip(phat, shifted)]


def mle_t(a, phat, t):
    p = [1 / len(a)] * len(a)
    for _ in range(100):
        mu, var = mean_var(a, p)
        sigma = math.sqrt(var)
        phi = [ai - 0.5 - 0.5 * t * sigma * (1 + ((ai - mu) / sigma) ** 2) for ai in a]
        x = secular(phi, phat)
        new = [pi / (1 + x * fi) for pi, fi in zip(phat, phi)]
        diff = max(abs(u - v) for u, v in zip(new, p))
        p = new
        if diff < 1e-13:
            break
    return p


def logistic(elo):
    return 1 / (1 + 10 ** (-elo / 400))


def case(c):
    counts = c["counts"]
    k = len(counts)
    a = [i / (k - 1) for i in range(k)]
    reg = [x if x > 0 else 1e-3 for x in counts]
    n = sum(reg)
    phat = [x / n for x in reg]
    if c["model"] == "logistic":
        mean = (lambda e: logistic(e)) if k == 5 else (lambda e: (logistic(e) + 0.5) / 2)
        p0, p1 = mle_mean(a, phat, mean(c["elo0"])), mle_mean(a, phat, mean(c["elo1"]))
    else:
        t = lambda e: math.sqrt(2) * e / NELO_PER_T
        p0, p1 = mle_t(a, phat, t(c["elo0"])), mle_t(a, phat, t(c["elo1"]))
    llr = n * sum(pi * (math.log(u) - math.log(v)) for pi, u, v in zip(phat, p1, p0))
    alpha, beta = c["alpha"], c["beta"]
    out = {
        "llr": llr,
        "lower": math.log(beta / (1 - alpha)),
        "upper": math.log((1 - beta) / alpha),
    }
    total = sum(counts)
    s, v = mean_var(a, [x / total for x in counts])
    if v > 0:
        # Fixed size: the one-sided p-value of "no better", normal approximation of the mean.
        out["p_better"] = 0.5 * math.erfc((s - 0.5) / math.sqrt(v / total) / math.sqrt(2))
        nelo = lambda score: (score - 0.5) / math.sqrt(2 * v) * NELO_PER_T
        half = Z * math.sqrt(v / total)
        out["nelo"] = nelo(s)
        out["nelo_error"] = (nelo(s + half) - nelo(s - half)) / 2
        if k == 5 and 0 < s - half and s + half < 1:
            elo = lambda score: -400 * math.log10(1 / score - 1)
            out["elo"], out["elo_low"], out["elo_high"] = elo(s), elo(s - half), elo(s + half)
    return out


print(json.dumps([case(c) for c in json.load(sys.stdin)]))
