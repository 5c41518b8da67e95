"""A plain numpy RK4 of rk4's equations (src/rk4/README.md), the tests' reference."""
import numpy as np


def rhs(F, G, d, kerr):
    return (-2j * F - 1j * d * (2 * G - 1) - 1j * kerr * np.abs(F) ** 2 * F,
            -1j * (np.conj(d) * F - d * np.conj(F)))


def rk4(F, G, steps, dt, g, kerr=0.0, per_stage=False):
    F = np.array(F, dtype=np.complex128)
    G = np.array(G, dtype=np.complex128)
    d = g * F.sum() if per_stage else 0j
    history = [d]
    for _ in range(steps):
        k1 = rhs(F, G, d, kerr)
        F2, G2 = F + dt / 2 * k1[0], G + dt / 2 * k1[1]
        k2 = rhs(F2, G2, g * F2.sum() if per_stage else d, kerr)
        F3, G3 = F + dt / 2 * k2[0], G + dt / 2 * k2[1]
        k3 = rhs(F3, G3, g * F3.sum() if per_stage else d, kerr)
        F4, G4 = F + dt * k3[0], G + dt * k3[1]
        k4 = rhs(F4, G4, g * F4.sum() if per_stage else d, kerr)
        F = F + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        G = G + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        d = g * F.sum()
        history.append(d)
    return F, G, np.array(history)


def start(shape, seed=1):
    r = np.random.default_rng(seed)
    F0 = r.uniform(-1, 1, shape) + 1j * r.uniform(-1, 1, shape) + (0.5 + 0.2j)
    G0 = np.full(shape, 0.25 + 0j) + r.uniform(0, 0.1, shape)
    return F0, G0
