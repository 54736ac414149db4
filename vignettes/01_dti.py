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
# # DTI end to end: predicting a tract profile from another
#
# The DTI data of the R package **refund** hold fractional anisotropy (FA) profiles along two
# white-matter tracts — the corpus callosum (`cca`, 93 points) and the right corticospinal tract
# (`rcst`, 55 points) — for multiple sclerosis (MS) patients and healthy controls. Following
# Bouche et al. (2021), we predict the whole `rcst` profile from the `cca` profile for the first
# visit of the 100 MS patients, although parts of many `rcst` profiles are missing.
#
# *The MRI/DTI data were collected at Johns Hopkins University and the Kennedy-Krieger Institute.*

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

from fdakpl import FunctionalRegression, Gaussian, KPLRegressor, Laplace, LogCosh, Wavelet, datasets
from fdakpl.baselines import FunctionalKRR, KernelEstimator, TripleBasisEstimator

# isort: split
# %% [markdown]
# ## Loading the data through the R bridge
#
# `load_dti()` reads refund's `DTI` through R (rpy2) when R is available — from refund itself if it
# is installed, else from the copy of `DTI.RData` bundled with fdakpl — and without R through the
# `rdata` reader. Every route gives the same labelled `xarray.Dataset`.

# %%
from fdakpl.r import convert as fr

if fr.rpy2_available():
    ds_r = datasets.load_dti(source="r")
    ds = datasets.load_dti(source="rdata")
    print("R route and rdata route identical:", ds_r.drop_attrs().identical(ds.drop_attrs()))
else:
    ds = datasets.load_dti(source="rdata")
print(ds)

# %% [markdown]
# ## Exploring
#
# Profiles of patients and controls, and where the `rcst` profiles are unobserved.

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), constrained_layout=True)
for ax, var in zip(axes[:2], ["cca", "rcst"], strict=True):
    loc = f"{var}_loc"
    for case, color, label in [(0, "C0", "control"), (1, "C3", "MS")]:
        sub = ds[var].where((ds.case == case) & (ds.visit == 1), drop=True)
        ax.plot(sub[loc], sub.T, color=color, alpha=0.15, lw=0.7)
        ax.plot(sub[loc], sub.mean("sample"), color=color, lw=2.5, label=f"{label} mean")
    ax.set_title(f"{var}: first visits")
    ax.set_xlabel(f"{loc} (rescaled to [0, 1])")
    ax.set_ylabel("fractional anisotropy")
    ax.legend(frameon=False)
first = datasets.dti_first_visits(ds)
axes[2].imshow(np.isnan(first.rcst.values), aspect="auto", cmap="Greys", interpolation="nearest")
axes[2].set_title(f"unobserved rcst points ({int(first.rcst.isnull().sum())} of {first.rcst.size})")
axes[2].set_xlabel("rcst location index")
axes[2].set_ylabel("MS patient (first visit)")
plt.show()

# %% [markdown]
# ## Fitting ridge-KPL with the formula interface
#
# The defaults, with no argument but the formula and the data: a Fourier dictionary, a Gaussian
# kernel on the `cca` profiles (their two missing values are interpolated) whose width is chosen
# among 4, 8 and 16 times the median heuristic, the scale-decaying output matrix
# $B = \mathrm{diag}(b^{-j})$ with $b$ chosen among 1, 1.5 and 2, and λ — all three jointly, by exact
# leave-one-curve-out in closed form (pointwise GCV, `lam="gcv"`, leaves out single points of
# dependent curves and undersmooths; see the guide's tuning page). The responses are partially
# observed, so the plug-in ridge estimator runs. The summary reports the chosen width and $b$.

# %%
rng = np.random.default_rng(2021)
perm = rng.permutation(100)
train, test = first.isel(sample=np.sort(perm[:70])), first.isel(sample=np.sort(perm[70:]))
res = FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False).fit()
print(res.summary(diagnostics="full"))

# %% [markdown]
# The summary reports the fit (with its leave-one-curve-out error against the mean curve's), one row
# per term, and, with `diagnostics="full"`, the section-5 diagnostics: the Fourier atoms are orthonormal (a
# Riesz basis with constants 1), every curve has more than $\sqrt n$ observed points (the
# consistency regime of Proposition 5.2), and the theory's $\lambda^*$ is far larger than the
# data-driven choice — the bound is conservative.

# %%
fig = res.plot()
plt.show()

# %% [markdown]
# ## Prediction on held-out patients, with conformal bands
#
# Split-conformal bands calibrate on 30% of the training curves (21 of them): pointwise bands cover
# each location with probability at least 90%, simultaneous bands cover whole curves. With only 21
# calibration curves the finite-sample quantile (the 20th of 21 scores) makes the bands somewhat
# conservative.

# %%
lo_p, hi_p, pred = res.prediction_bands(test, alpha=0.1, kind="pointwise")
lo_s, hi_s, _ = res.prediction_bands(test, alpha=0.1, kind="simultaneous")
y = test.rcst.values
obs = ~np.isnan(y)
cov_p = ((y >= lo_p.values) & (y <= hi_p.values))[obs].mean()
cov_s = np.mean([np.all(((y[i] >= lo_s.values[i]) & (y[i] <= hi_s.values[i]))[obs[i]]) for i in range(len(y))])
err = (res.predict(test).values - y) ** 2
print(f"test MSE (mean over curves of the sum over observed points): {np.mean(np.nansum(err, axis=1)):.4f}")
print(f"pointwise band: {100 * cov_p:.1f}% of observed test points inside (nominal 90%)")
print(f"simultaneous band: {100 * cov_s:.1f}% of test curves entirely inside (nominal 90%)")
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), constrained_layout=True, sharey=True)
grid = test.rcst_loc.values
for ax, i in zip(axes, [0, 10, 20], strict=True):
    ax.fill_between(grid, lo_s.values[i], hi_s.values[i], color="C0", alpha=0.15, label="simultaneous 90%")
    ax.fill_between(grid, lo_p.values[i], hi_p.values[i], color="C0", alpha=0.3, label="pointwise 90%")
    ax.plot(grid, y[i], "o", ms=3, color="0.3", label="observed")
    ax.plot(grid, pred.values[i], color="C3", lw=1.8, label="KPL")
    ax.set_title(str(test.sample.values[i]))
    ax.set_xlabel("rcst_loc")
axes[0].legend(fontsize=8, frameon=False)
plt.show()

# %% [markdown]
# ## Is there an association at all? A permutation test
#
# The statistic is the exact leave-one-curve-out error; permuting the `cca` profiles across
# patients draws from the null of no association.

# %%
test_out = res.permutation_test("cca", n_permutations=99, random_state=0, progress=False)
print(test_out)

# %% [markdown]
# ## Comparison with the paper's competitors
#
# Three random 70/30 splits (the full 20-split protocol with the paper's grids is
# `python -m experiments.dti_table1 --full`, reported in the README). Every method picks its
# hyper-parameters by 5-fold cross-validation on the training curves over small grids:
# KE (functional Nadaraya–Watson), 3BE (wavelet bases + random Fourier features), FKRR (Laplace
# output operator), ridge-KPL, and logcosh-KPL (iterative solver). For logcosh-KPL we keep the
# ridge's λ and choose γ: near zero $\log\cosh(\gamma a)/\gamma \approx \gamma a^2/2$, so
# λ·γ/2 gives the logcosh problem the ridge's balance between fit and penalty for small residuals.

# %%
def mse(model, tr, te):
    model.fit(tr.cca, tr.rcst)
    e = (np.asarray(model.predict(te.cca)) - te.rcst.values) ** 2
    return float(np.mean(np.nansum(e, axis=1)))


def cv_pick(makers, tr, n_folds=5, seed=0):
    """Index of the maker with the smallest 5-fold CV error on the training curves."""
    folds = np.array_split(np.random.default_rng(seed).permutation(tr.sizes["sample"]), n_folds)
    scores = []
    for make in makers:
        s = [mse(make(), tr.isel(sample=np.setdiff1d(np.arange(tr.sizes["sample"]), f)), tr.isel(sample=f))
             for f in folds]
        scores.append(np.mean(s))
    return int(np.argmin(scores))


sig = 0.08  # median heuristic of the cca profiles' L2 distances
lams = [1e-4, 1e-3, 1e-2]
gammas = [2.0, 8.0, 32.0]


def kpl(lam, loss="square"):
    return KPLRegressor(Wavelet("db3", level=4), Gaussian(sig), output_matrix=1.5, lam=lam, loss=loss,
                        interpolate_inputs=True)


methods = {
    "KE": [lambda b=b: KernelEstimator(bandwidth=b, interpolate_inputs=True) for b in [0.02, 0.04, 0.08, 0.16]],
    "3BE": [lambda lam=lam: TripleBasisEstimator("db3", Wavelet("db3", level=4), n_components=100, sigma=0.3,
                                                 lam=lam, random_state=0, interpolate_inputs=True)
            for lam in lams],
    "FKRR": [lambda lam=lam, so=so: FunctionalKRR(Gaussian(sig), Laplace(so), lam=lam, interpolate_inputs=True)
             for lam in lams for so in [0.5, 2.0]],
    "ridge-KPL": [lambda lam=lam: kpl(lam) for lam in lams],
}
table = {k: [] for k in [*methods, "logcosh-KPL"]}
times = dict.fromkeys(table, 0.0)
for split in range(3):
    p = np.random.default_rng(split).permutation(100)
    tr, te = first.isel(sample=np.sort(p[:70])), first.isel(sample=np.sort(p[70:]))
    for name, makers in methods.items():
        t0 = time.perf_counter()
        best = cv_pick(makers, tr)
        table[name].append(mse(makers[best](), tr, te))
        times[name] += time.perf_counter() - t0
        if name == "ridge-KPL":
            lam = lams[best]
    t0 = time.perf_counter()
    robust = [lambda g=g, lam=lam: kpl(lam * g / 2, LogCosh(g, relative=False)) for g in gammas]
    table["logcosh-KPL"].append(mse(robust[cv_pick(robust, tr)](), tr, te))
    times["logcosh-KPL"] += time.perf_counter() - t0
print(f"{'method':12s} {'test MSE':>18s} {'time (s)':>9s}")
for name in table:
    print(f"{name:12s} {np.mean(table[name]):.4f} ± {np.std(table[name]):.4f} {times[name]:9.1f}")
ranking = sorted(table, key=lambda k: np.mean(table[k]))
spread = max(np.mean(v) for v in table.values()) - min(np.mean(v) for v in table.values())
print("ranking:", " < ".join(ranking))
typical_std = np.mean([np.std(v) for v in table.values()])
print(f"spread of the means {spread:.4f} vs typical split-to-split std {typical_std:.4f}")

# %% [markdown]
# The paper's Table 1 reads KE 0.231, 3BE 0.227, KAM 0.222, FKRR 0.215, ridge-KPL 0.211 and
# logcosh-KPL 0.209, with standard deviations about 0.02 over 20 splits: the methods are close and
# the ranking is within the split-to-split variability. The few splits above are for illustration
# (compare the spread of the means with the standard deviations printed above); the README reports
# the full protocol. KPL's closed form makes its tuning cheap: one pair of eigendecompositions per
# fold serves the whole λ path.
