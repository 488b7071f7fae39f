"""Library peers of the forecast benchmark (issue 10), run by bench/forecast/run.ts with /usr/bin/python3
(Debian's python3-sklearn and python3-statsmodels).

Usage: peers.py <sets.json>   (written by run.ts; the rows to forecast have y = null: nothing leaks)
Prints one JSON object: {set_id: {model: {"pred": [...], "seconds": s} | {"error": "..."}}}.

Features a user would give scikit-learn (documented here, used for every sklearn model):
  - tabular sets: the numeric inputs (standardised) and the categorical inputs one-hot encoded;
  - time series: the same, plus date parts and a trend index:
      t        days (daily) / months (monthly) / years (annual) since the first row: the trend;
      month    one-hot (daily and monthly data), the yearly season;
      doy      sin/cos of 2*pi*day-of-year/365.25 (daily), a smooth yearly season;
      weekday  one-hot (daily).
  Linear models and MLPs get standardised inputs (StandardScaler) and, for regression, a standardised
  target (TransformedTargetRegressor): an MLP on raw targets like 135,000 jobs would not train.
BENCH_PEERS_MLP_SEEDS=N (time series only): also fits the MLP with random_state 0..N-1 and reports each
  seed's forecast as "mlp_seeds", so run.ts can show where the table's seed (0) falls among them.
Models (fixed random_state, library defaults otherwise):
  regression:     linear = LinearRegression; mlp = MLPRegressor((64, 64), early_stopping, max_iter 500);
                  gbr = GradientBoostingRegressor (100 trees, depth 3);
  classification: linear = LogisticRegression; mlp = MLPClassifier((64, 64), early_stopping);
                  gbr = GradientBoostingClassifier.
statsmodels (time series only):
  holt_winters    ExponentialSmoothing, additive trend + additive season of the set's season length
                  (monthly 12; annual: trend only), univariate; skipped for daily data with covariates
                  (a 365-day season over 3 years and no covariates is not what anyone would fit).
  ets             ETSModel, additive errors, the lowest AICc of {none, additive, damped additive trend} x
                  {no season, additive season} (season when two seasons plus two points are there);
                  univariate only (issue 23).
  theta           ThetaModel (SES with drift = half the linear trend's slope), deseasonalised by statsmodels'
                  own seasonality test (multiplicative for positive series, else additive); univariate only.
  comb            the mean of ets and theta (the M4 "Comb" idea: a plain average of exponential smoothers).
  sarima          SARIMAX; univariate monthly: the lowest AIC of (p,1,q)(P,1,Q,12) for
                  (p,q) in {(0,1),(1,0),(1,1)} and (P,Q) in {(0,1),(1,1)}; annual: (p,1,q) with drift,
                  (p,q) in {(0,1),(1,0),(1,1),(2,1)}; daily with covariates: regression with ARMA(1,1)
                  errors on the covariates plus 2 Fourier pairs of the yearly season (exogenous inputs
                  of the rows to forecast are known, as they are to the service).
"""
import json
import math
import os
import sys
import time
import warnings
from datetime import date

import numpy as np

warnings.filterwarnings("ignore")

from sklearn.compose import TransformedTargetRegressor  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


def one_hot(values, categories):
    return np.array([[1.0 if v == c else 0.0 for c in categories] for v in values])


def features(s):
    n = len(s["y"])
    cols = []
    for c in s["numeric"]:
        cols.append(np.array(s["inputs"][c], dtype=float).reshape(-1, 1))
    for c in s["categorical"]:
        vals = [str(v) for v in s["inputs"][c]]
        cats = sorted(set(vals))
        cols.append(one_hot(vals, cats))
    t = s.get("time")
    if t:
        ds = [date.fromisoformat(d[:10]) for d in t["dates"]]
        freq = t["frequency"]
        if freq == "daily":
            idx = [(d - ds[0]).days for d in ds]
        elif freq == "monthly":
            idx = [(d.year - ds[0].year) * 12 + d.month - ds[0].month for d in ds]
        elif freq == "quarterly":
            idx = [((d.year - ds[0].year) * 12 + d.month - ds[0].month) // 3 for d in ds]
        else:
            idx = [d.year - ds[0].year for d in ds]
        cols.append(np.array(idx, dtype=float).reshape(-1, 1))
        if freq in ("daily", "monthly", "quarterly"):
            cols.append(one_hot([d.month for d in ds], list(range(1, 13))))
        if freq == "daily":
            doy = np.array([d.timetuple().tm_yday for d in ds], dtype=float)
            cols.append(np.column_stack([np.sin(2 * math.pi * doy / 365.25), np.cos(2 * math.pi * doy / 365.25)]))
            cols.append(one_hot([d.weekday() for d in ds], list(range(7))))
    if not cols:
        return np.zeros((n, 0))
    return np.hstack(cols)


def mlp_regressor(seed, big=False):
    return TransformedTargetRegressor(
        regressor=make_pipeline(
            StandardScaler(),
            MLPRegressor(hidden_layer_sizes=(64, 64), early_stopping=True, max_iter=100 if big else 500, random_state=seed),
        ),
        transformer=StandardScaler(),
    )


def mlp_seeds(X, ytr, train, test, count):
    started = time.time()
    preds = []
    for seed in range(count):
        model = mlp_regressor(seed)
        model.fit(X[train], ytr)
        preds.append([p.item() for p in model.predict(X[test])])
    return {"preds": preds, "seconds": time.time() - started}


def sklearn_models(s, X, train, test):
    ytr = [s["y"][i] for i in train]
    out = {}
    if s["task"] == "regression":
        ytr = np.array(ytr, dtype=float)
        big = len(train) > 20000
        models = {
            "linear": make_pipeline(StandardScaler(), LinearRegression()),
            "mlp": mlp_regressor(0, big),
            "gbr": GradientBoostingRegressor(random_state=0),
        }
    else:
        models = {
            "linear": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
            "mlp": make_pipeline(
                StandardScaler(), MLPClassifier(hidden_layer_sizes=(64, 64), early_stopping=True, max_iter=2000, random_state=0)
            ),
            "gbr": GradientBoostingClassifier(random_state=0),
        }
    for name, model in models.items():
        started = time.time()
        try:
            model.fit(X[train], ytr)
            pred = model.predict(X[test])
            out[name] = {"pred": [p.item() if hasattr(p, "item") else p for p in pred], "seconds": time.time() - started}
        except Exception as e:  # a peer that fails is reported, not fatal
            out[name] = {"error": repr(e)}
    seeds = int(os.environ.get("BENCH_PEERS_MLP_SEEDS", "0"))
    if seeds > 0 and s.get("time") and s["task"] == "regression":
        out["mlp_seeds"] = mlp_seeds(X, ytr, train, test, seeds)
    return out


def fourier(dates, k=2):
    doy = np.array([date.fromisoformat(d[:10]).timetuple().tm_yday for d in dates], dtype=float)
    return np.column_stack([f(2 * math.pi * j * doy / 365.25) for j in range(1, k + 1) for f in (np.sin, np.cos)])


def statsmodels_models(s, train, test):
    from statsmodels.tsa.holtwinters import ExponentialSmoothing
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    t = s["time"]
    y = np.array([s["y"][i] for i in train], dtype=float)
    h = len(test)
    season = t["season"]
    out = {}
    covariates = bool(s["numeric"] or s["categorical"])
    if t["frequency"] != "daily" and not covariates:
        started = time.time()
        try:
            seasonal = "add" if season > 1 and len(y) >= 2 * season else None
            hw = ExponentialSmoothing(
                y, trend="add", seasonal=seasonal, seasonal_periods=season if seasonal else None, initialization_method="estimated"
            ).fit()
            out["holt_winters"] = {"pred": hw.forecast(h).tolist(), "seconds": time.time() - started}
        except Exception as e:
            out["holt_winters"] = {"error": repr(e)}
    if not covariates:
        out.update(ets_theta(y, h, season))
    started = time.time()
    try:
        if covariates:
            cols = [np.array(s["inputs"][c], dtype=float).reshape(-1, 1) for c in s["numeric"]]
            for c in s["categorical"]:
                vals = [str(v) for v in s["inputs"][c]]
                cols.append(one_hot(vals, sorted(set(vals))[1:]))  # first category dropped: identifiable with the constant
            X = np.hstack(cols + [fourier(t["dates"])])
            mu, sd = X[train].mean(axis=0), X[train].std(axis=0)
            X = (X - mu) / np.where(sd > 0, sd, 1)
            model = SARIMAX(y, exog=X[train], order=(1, 0, 1), trend="c").fit(disp=False, maxiter=200)
            pred = model.forecast(h, exog=X[test])
        elif season > 1:
            best = None
            for p, q in ((0, 1), (1, 0), (1, 1)):
                for P, Q in ((0, 1), (1, 1)):
                    try:
                        m = SARIMAX(y, order=(p, 1, q), seasonal_order=(P, 1, Q, season)).fit(disp=False, maxiter=200)
                    except Exception:
                        continue
                    if best is None or m.aic < best.aic:
                        best = m
            pred = best.forecast(h)
        else:
            best = None
            for p, q in ((0, 1), (1, 0), (1, 1), (2, 1)):
                try:
                    m = SARIMAX(y, order=(p, 1, q), trend="t").fit(disp=False, maxiter=200)
                except Exception:
                    continue
                if best is None or m.aic < best.aic:
                    best = m
            pred = best.forecast(h)
        out["sarima"] = {"pred": np.asarray(pred).tolist(), "seconds": time.time() - started}
    except Exception as e:
        out["sarima"] = {"error": repr(e)}
    return out


def ets_theta(y, h, season):
    """statsmodels ETSModel chosen by AICc, ThetaModel, and their mean (issue 23)."""
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel
    from statsmodels.tsa.forecasting.theta import ThetaModel

    out = {}
    started = time.time()
    try:
        seasonal = season > 1 and len(y) >= 2 * season + 2
        forms = [(t, d, s) for t, d in ((None, False), ("add", False), ("add", True)) for s in ((None, "add") if seasonal else (None,))]
        best = None
        for trend, damped, seas in forms:
            try:
                m = ETSModel(y, error="add", trend=trend, damped_trend=damped, seasonal=seas, seasonal_periods=season if seas else None).fit(
                    disp=False, maxiter=1000
                )
            except Exception:
                continue
            if np.isfinite(m.aicc) and (best is None or m.aicc < best.aicc):
                best = m
        out["ets"] = {"pred": np.asarray(best.forecast(h)).tolist(), "seconds": time.time() - started}
    except Exception as e:
        out["ets"] = {"error": repr(e)}
    started = time.time()
    try:
        # Multiplicative deseasonalising needs positive values; statsmodels' own test decides whether to.
        method = "multiplicative" if np.all(y > 0) else "additive"
        theta = ThetaModel(y, period=season if season > 1 else None, deseasonalize=season > 1 and len(y) >= 2 * season, method=method).fit()
        out["theta"] = {"pred": np.asarray(theta.forecast(h)).tolist(), "seconds": time.time() - started}
    except Exception as e:
        out["theta"] = {"error": repr(e)}
    if "pred" in out["ets"] and "pred" in out["theta"]:
        out["comb"] = {"pred": [(a + b) / 2 for a, b in zip(out["ets"]["pred"], out["theta"]["pred"])], "seconds": 0.0}
    return out


def main():
    sets = json.load(open(sys.argv[1]))
    result = {}
    for s in sets:
        hidden = set(s["hidden"])
        train = [i for i in range(len(s["y"])) if i not in hidden]
        test = list(s["hidden"])
        assert all(s["y"][i] is None for i in test), "rows to forecast must arrive without their values"
        X = features(s)
        out = sklearn_models(s, X, train, test)
        if s.get("time") and s["task"] == "regression":
            out.update(statsmodels_models(s, train, test))
        result[s["id"]] = out
        print(f"peers: {s['id']} done", file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
