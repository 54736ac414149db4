# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Dictionaries and dictionary learning
#
# KPL predicts the coefficients of a response curve on a dictionary $\phi = (\phi_1, \dots, \phi_d)$.
# The dictionary bounds what can be predicted: a curve is only as well predicted as it can be
# *represented*. This vignette compares the families fdakpl offers on the DTI tract profiles
# (`rcst`, partially observed) and on simulated rough curves:
#
# * **Fourier** (orthonormal, global, smooth),
# * **wavelets** from PyWavelets (Daubechies, symmetric extension: redundant, local, multi-scale),
# * **FPCA** (orthonormal, fitted to the data),
# * **learnt dictionaries** (the paper's problem `prob :: dictionary learning`: atoms in the unit
#   $L^2$ ball, $\ell_1$-penalised codes, alternating optimisation).
#
# For each we measure the *representation error* (relative $L^2$ error of the best approximation of
# each training curve from its observed points) against the number of atoms, the fit time, and the
# test error of ridge-KPL. Grids are smaller than in `experiments/` so that this runs in about a minute.

# %%
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

from fdakpl import FPCA, Fourier, FunctionalRegression, Wavelet, datasets
from fdakpl.data.functional import Observations, quadrature_weights
from fdakpl.diagnostics.bounds import representation_error
from fdakpl.dictionaries import Learned

warnings.simplefilter("ignore", UserWarning)
ds = datasets.dti_first_visits()
grid = ds.rcst_loc.values
Y = ds.rcst.values
obs = Observations.from_dense(Y - np.nanmean(Y, axis=0), grid)
print(f"{obs.n_samples} curves, {grid.size} locations, {100 * np.isnan(Y).mean():.1f}% unobserved")

# %% [markdown]
# ## Representation error against the number of atoms
#
# The weights of the plug-in estimator ($|\Theta|/m_i$ per observed point) define the norm; a
# wavelet dictionary with its resolution equal to the grid reproduces every sampled curve (error 0),
# so wavelets are compared through the number of levels kept (coarser approximations drop the finest
# details).

# %%
def rep_error(dic):
    t0 = time.perf_counter()
    dic.fit(obs, domain=(0.0, 1.0))
    fit_s = time.perf_counter() - t0
    w = (1.0 / obs.counts)[obs.index]
    err = representation_error(dic.evaluate(grid)[obs.grid_index], obs, w)
    return dic.n_atoms_, float(np.median(err)), fit_s


rows = []
for k in [1, 2, 3, 5, 8, 12]:
    rows.append(("Fourier", *rep_error(Fourier(k))))
for k in [2, 4, 6, 10, 15, 20]:
    rows.append(("FPCA", *rep_error(FPCA(k))))
for k in [3, 6, 10, 15]:
    rows.append(("learnt", *rep_error(Learned(k, tau=1e-4, max_iter=60, random_state=0, progress=False))))
for level in [1, 2, 3]:
    # keep only the approximation at a coarse resolution: db3 on 2**(level+2) points
    rows.append(("db3 wavelets", *rep_error(Wavelet("db3", level=level, resolution=2 ** (level + 2)))))

fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
for fam, marker in [("Fourier", "o"), ("FPCA", "s"), ("learnt", "^"), ("db3 wavelets", "D")]:
    pts = np.array([(d, e) for f, d, e, _ in rows if f == fam])
    ax.semilogy(pts[:, 0], pts[:, 1], marker + "-", label=fam)
ax.set_xlabel("number of atoms d")
ax.set_ylabel("median relative representation error")
ax.set_title("DTI rcst: how well each family represents the curves")
ax.grid(alpha=0.3, which="both")
ax.legend(frameon=False)
plt.show()
for fam, d, e, t in rows:
    print(f"{fam:13s} d={d:3d}  median error={e:.4f}  fit={1e3 * t:7.1f} ms")

# %% [markdown]
# FPCA is built to minimise this error on the training curves and wins at small $d$; a learnt
# dictionary with few atoms comes close without being constrained to orthogonal, centred
# components. Fourier atoms are global and need many frequencies for the sharp dip of the tract
# profiles near 0.8.

# %% [markdown]
# ## The atoms
#
# Leading atoms of three families: FPCA's are orthonormal and ordered by explained variance; the
# learnt atoms are localised bumps and ramps; wavelets are local at every scale.

# %%
fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), constrained_layout=True, sharex=True)
t = np.linspace(0, 1, 300)
for ax, (name, dic) in zip(axes, [("FPCA", FPCA(4)), ("learnt", Learned(4, tau=1e-4, random_state=0,
                                                                             progress=False)),
                                  ("db3 wavelets", Wavelet("db3", level=3))], strict=True):
    dic.fit(obs, domain=(0.0, 1.0))
    phi = dic.evaluate(t)
    order = np.lexsort((np.arange(dic.n_atoms_), dic.scales_))[:4]
    for j in order:
        ax.plot(t, phi[:, j], lw=1.3)
    ax.set_title(f"{name} (d = {dic.n_atoms_})")
    ax.grid(alpha=0.3)
plt.show()

# %% [markdown]
# ## Test error of ridge-KPL with each dictionary
#
# Ten random 70/30 splits, $B = I$, and the defaults for the rest: a Gaussian kernel on `cca` whose
# width (4, 8 or 16 × the median heuristic) and λ are chosen jointly by leave-one-curve-out.
# The MSE is the paper's Table 1 scale: mean over test curves of the sum of squared errors over
# their observed points.

# %%
dicts = {
    "Fourier(8)": Fourier(8),
    "FPCA(10)": FPCA(10),
    "learnt(10)": Learned(10, tau=1e-4, max_iter=60, random_state=0, progress=False),
    "db3, 4 levels": Wavelet("db3", level=4),
}
rng = np.random.default_rng(0)
splits = [rng.permutation(100) for _ in range(10)]
scores = {k: [] for k in dicts}
times = {k: [] for k in dicts}
for perm in splits:
    train, test = ds.isel(sample=np.sort(perm[:70])), ds.isel(sample=np.sort(perm[70:]))
    for name, dic in dicts.items():
        t0 = time.perf_counter()
        res = FunctionalRegression("rcst ~ cca", train, dictionary=dic, output_matrix=None,
                                   interpolate_inputs=True, progress=False).fit()
        times[name].append(time.perf_counter() - t0)
        err = (res.predict(test).values - test.rcst.values) ** 2
        scores[name].append(np.mean(np.nansum(err, axis=1)))
for name in dicts:
    print(f"{name:14s} test MSE {np.mean(scores[name]):.4f} ± {np.std(scores[name]):.4f}   "
          f"fit (incl. tuning) {1e3 * np.median(times[name]):6.1f} ms")

# %% [markdown]
# The representation error shows up in the test error: with 17–21 global atoms, Fourier, FPCA and
# learnt dictionaries cannot represent the fine structure of the profiles (their representation
# error is still 10–15%), and the truncation adds about 0.08 to the test MSE. The redundant wavelet
# dictionary reproduces the sampled curves and lets the output matrix `B` decide how much of the
# fine scales to use: it reaches the paper's range (about 0.21). More atoms for the other families
# would close part of the gap at a higher cost.

# %% [markdown]
# ## Rough curves: where learnt dictionaries pay off
#
# Simulated responses built from a few sharp, localised patterns plus noise. Fourier needs many
# atoms; a learnt dictionary captures the patterns with few.

# %%
rng = np.random.default_rng(1)
tt = np.linspace(0, 1, 128)
patterns = np.vstack([np.exp(-((tt - c) / 0.03) ** 2) - 0.5 * np.exp(-((tt - c - 0.06) / 0.02) ** 2)
                      for c in (0.2, 0.45, 0.7)])
codes = rng.exponential(size=(150, 3)) * (rng.uniform(size=(150, 3)) < 0.6)
Yr = codes @ patterns + 0.02 * rng.normal(size=(150, 128))
obs_r = Observations.from_dense(Yr - Yr.mean(0), tt)
w_r = quadrature_weights(tt)[obs_r.grid_index]
out = []
for name, dic in [("Fourier(10)", Fourier(10)), ("Fourier(30)", Fourier(30)), ("FPCA(3)", FPCA(3)),
                  ("learnt(3)", Learned(3, tau=1e-3, max_iter=100, random_state=0, progress=False))]:
    t0 = time.perf_counter()
    dic.fit(obs_r, domain=(0.0, 1.0))
    el = time.perf_counter() - t0
    e = representation_error(dic.evaluate(tt)[obs_r.grid_index], obs_r, w_r)
    out.append((name, dic.n_atoms_, np.median(e), el))
    print(f"{name:12s} d={dic.n_atoms_:3d}  median error={np.median(e):.4f}  fit={1e3 * el:7.1f} ms")

# %% [markdown]
# Three learnt atoms (and here also three FPCA components, since the curves live in a
# three-dimensional space) represent the curves to about 1%, the noise level; Fourier needs
# 61 atoms to do as well (21 atoms leave about 8%), and with that many it starts to fit the noise.
# Learning costs a one-off fit (per CV fold), after which KPL works with a small $d$: the trade-off
# the paper describes in its speech experiment.
