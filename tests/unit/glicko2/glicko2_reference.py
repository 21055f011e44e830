"""An independent Glicko-2 from the paper's text ("Example of the Glicko-2 system", steps
1-8), for differential tests: written from the formulas again, without the engine's code
(no shared helper), one period of one player at a time."""

from __future__ import annotations

import math

SCALE = 173.7178


def glicko2_period(rating, rd, sigma, games, tau=0.5):
    """games: [(opponent rating, opponent RD, score)]. Returns (r', RD', sigma')."""
    mu, phi = (rating - 1500) / SCALE, rd / SCALE
    if not games:  # "If a player does not compete ... only Step 6 applies"
        return rating, SCALE * math.sqrt(phi**2 + sigma**2), sigma
    gs, es, ss = [], [], []
    for r_j, rd_j, s_j in games:
        mu_j, phi_j = (r_j - 1500) / SCALE, rd_j / SCALE
        g_j = 1 / math.sqrt(1 + 3 * phi_j**2 / math.pi**2)
        gs.append(g_j)
        es.append(1 / (1 + math.exp(-g_j * (mu - mu_j))))
        ss.append(s_j)
    v = 1 / sum(g * g * e * (1 - e) for g, e in zip(gs, es))
    delta = v * sum(g * (s - e) for g, e, s in zip(gs, es, ss))
    # Step 5, 5.1-5.5.
    a = math.log(sigma**2)

    def f(x):
        return (math.exp(x) * (delta**2 - phi**2 - v - math.exp(x))) / (
            2 * (phi**2 + v + math.exp(x)) ** 2
        ) - (x - a) / tau**2

    A = a
    if delta**2 > phi**2 + v:
        B = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k = k + 1
        B = a - k * tau
    fA, fB = f(A), f(B)
    while abs(B - A) > 0.000001:
        C = A + (A - B) * fA / (fB - fA)
        fC = f(C)
        if fC * fB <= 0:
            A, fA = B, fB
        else:
            fA = fA / 2
        B, fB = C, fC
    sigma_new = math.exp(A / 2)
    phi_star = math.sqrt(phi**2 + sigma_new**2)
    phi_new = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
    mu_new = mu + phi_new**2 * sum(g * (s - e) for g, e, s in zip(gs, es, ss))
    return SCALE * mu_new + 1500, SCALE * phi_new, sigma_new
