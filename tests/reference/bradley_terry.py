#!/usr/bin/env python3
"""Bradley-Terry with a White advantage by maximum likelihood, written from the model's
definition (as ordo and bayeselo fit it), independently of arena's Rust code (standard library
only).

Reads {"games": [[white, black, white_score], ...], "virtual_draws": v} on stdin. Model: White's
expected score is L(r_white - r_black + h), L(x) = 1 / (1 + 10^(-x / 400)); a draw is half a
point (the log-likelihood of a game is s log L + (1 - s) log(1 - L)). Every pair that met gets
v virtual draws, half with each colour. Ratings are anchored so that their mean is 0. The
maximum is found by Newton's method on (r_1 .. r_{n-1}, h), r_n = -(r_1 + ... + r_{n-1}).
Prints {"ratings": {name: r}, "white_advantage": h}.
"""
import json
import math
import sys

data = json.load(sys.stdin)
games = [(w, b, float(s), 1.0) for w, b, s in data["games"]]
v = float(data.get("virtual_draws", 0))
pairs = sorted({tuple(sorted((w, b))) for w, b, _, _ in games})
if v > 0:
    for a, b in pairs:
        games.append((a, b, 0.5, v / 2))
        games.append((b, a, 0.5, v / 2))
names = sorted({p for w, b, _, _ in games for p in (w, b)})
n = len(names)
K = math.log(10) / 400
# Parameters: x[0..n-2] free ratings, x[n-1] the advantage.
x = [0.0] * n


def ratings(x):
    free = x[: n - 1]
    return dict(zip(names, free + [-sum(free)]))


def design(name):
    # d r_name / d x_j for the free ratings.
    i = names.index(name)
    if i < n - 1:
        return [1.0 if j == i else 0.0 for j in range(n - 1)]
    return [-1.0] * (n - 1)


def solve(a, b):
    m = len(b)
    a = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(m):
        p = max(range(c, m), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        for r in range(m):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [u - f * w for u, w in zip(a[r], a[c])]
    return [a[i][m] / a[i][i] for i in range(m)]


for _ in range(100):
    r = ratings(x)
    grad = [0.0] * n
    hess = [[0.0] * n for _ in range(n)]
    for w, b, s, weight in games:
        e = 1 / (1 + 10 ** (-(r[w] - r[b] + x[n - 1]) / 400))
        dw, db = design(w), design(b)
        d = [dw[j] - db[j] for j in range(n - 1)] + [1.0]
        for j in range(n):
            grad[j] += weight * K * (s - e) * d[j]
            for k in range(n):
                hess[j][k] -= weight * K * K * e * (1 - e) * d[j] * d[k]
    step = solve(hess, [-g for g in grad])
    x = [xi + si for xi, si in zip(x, step)]
    if max(abs(si) for si in step) < 1e-12:
        break
print(json.dumps({"ratings": ratings(x), "white_advantage": x[n - 1]}))
