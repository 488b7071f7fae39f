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
  sub-daily series (time.periods, issue 28), instead of all of the above:
  stl_ets         STL (statsmodels' STL, robust, period = the longest: a week of steps, whose seasonal
                  profile holds the daily shape too; statsmodels 0.13 has no MSTL) and ETSModel chosen by
                  AICc as `ets` (no season) on the seasonally adjusted series, the last week's seasonal
                  component repeated on top: what STLForecast does, with one STL for two models;
  stl_arima       the same STL with ARIMA(p,1,q) with drift on the adjusted series (the grid of `sarima`
                  for an unseasonal series, lowest AIC);
  sarima          SARIMAX with Fourier exogenous terms of each period (dynamic harmonic regression):
                  ARMA(1,1) errors with a constant, K per period by the lowest AICc of a small grid
                  (day: 3, 6, 10; week: 2, 5), so the corpus's "ours / SARIMA" has a SARIMA-family
                  anchor on series whose 168- or 672-step season no seasonal SARIMA fits in reasonable time.
  Each sees at most the last 100,000 known rows (the engine's own cap; the sets hold fewer) and has
  BENCH_PEERS_TIME_LIMIT seconds per series (default 300): one that runs out is reported as
  {"error": "timed out after N s"}.
  aicc_choice, library_aicc_choice, holdout_choice
                  univariate only: the forecast of whichever of ets, theta and sarima a chooser picks from
                  the known rows (issue 23's anchor "chosen by their own AICc"); see choices(). Each carries
                  "chose" (the pick) and "criteria" (every candidate's value).
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
    fits = {}
    if not covariates:
        out.update(ets_theta(y, h, season, fits))
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
        else:
            fits["sarima"] = sarima_fit(y, season)
            pred = fits["sarima"].forecast(h)
        out["sarima"] = {"pred": np.asarray(pred).tolist(), "seconds": time.time() - started}
    except Exception as e:
        out["sarima"] = {"error": repr(e)}
    if not covariates:
        out.update(choices(y, h, season, fits))
    return out


def sarima_fit(y, season):
    """The lowest AIC of the grid in the module's docstring (every candidate has the same differencing, so
    their AICs sum the same rows and compare)."""
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    if season > 1:
        grid = [((p, 1, q), (P, 1, Q, season), None) for p, q in ((0, 1), (1, 0), (1, 1)) for P, Q in ((0, 1), (1, 1))]
    else:
        grid = [((p, 1, q), (0, 0, 0, 0), "t") for p, q in ((0, 1), (1, 0), (1, 1), (2, 1))]
    best = None
    for order, seasonal_order, trend in grid:
        try:
            m = SARIMAX(y, order=order, seasonal_order=seasonal_order, trend=trend).fit(disp=False, maxiter=200)
        except Exception:
            continue
        if best is None or m.aic < best.aic:
            best = m
    if best is None:
        raise ValueError("no SARIMA order could be fitted")
    return best


def ets_fit(y, season):
    """ETSModel, additive errors, the lowest AICc of the forms in the module's docstring."""
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

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
    if best is None:
        raise ValueError("no ETS form could be fitted")
    return best


def theta_fit(y, season):
    from statsmodels.tsa.forecasting.theta import ThetaModel

    # Meant as multiplicative deseasonalising for positive series, but statsmodels 0.13's
    # _deseasonalize_data turns any method other than "auto" into "add": the peer deseasonalises additively.
    method = "multiplicative" if np.all(y > 0) else "additive"
    return ThetaModel(y, period=season if season > 1 else None, deseasonalize=season > 1 and len(y) >= 2 * season, method=method).fit()


def ets_theta(y, h, season, fits):
    """statsmodels ETSModel chosen by AICc, ThetaModel, and their mean (issue 23); the fitted models go to `fits`."""
    out = {}
    for name, fit in (("ets", ets_fit), ("theta", theta_fit)):
        started = time.time()
        try:
            fits[name] = fit(y, season)
            out[name] = {"pred": np.asarray(fits[name].forecast(h)).tolist(), "seconds": time.time() - started}
        except Exception as e:
            out[name] = {"error": repr(e)}
    if "pred" in out["ets"] and "pred" in out["theta"]:
        out["comb"] = {"pred": [(a + b) / 2 for a, b in zip(out["ets"]["pred"], out["theta"]["pred"])], "seconds": 0.0}
    return out


def theta_season(res, n):
    """The seasonal indices ThetaModel divided out (or subtracted) of rows 0..n-1, and whether additively; None
    when it did not deseasonalise. The results object keeps the period's indices privately (_seasonal) and
    applies them by row % period, as here."""
    seasonal = res._seasonal
    if not (res.model.deseasonalize and seasonal.shape[0]):
        return None, True
    return seasonal[np.arange(n) % res.model.period], res.model.method.startswith("add")


def theta_adjusted(res, y):
    """The series as Theta's SES saw it (its season taken out), and the indices to put back (None if none)."""
    s, additive = theta_season(res, len(y))
    return (y if s is None else (y - s if additive else y / s)), s, additive


def theta_one_step(res, y):
    """Theta's in-sample one-step forecasts on the series' own scale: from each origin t, what
    ThetaModelResults.forecast(1) would give after t rows: the SES level (started at the first value, as
    statsmodels does) plus the drift term b0 / 2 * (1/alpha - (1 - alpha)^t / alpha) (theta = 2),
    reseasonalised. From origin n it is the forecast itself (checked when this was written)."""
    n = len(y)
    x, s, additive = theta_adjusted(res, y)
    alpha, b0 = float(res.params["alpha"]), float(res.params["b0"])
    fitted = np.empty(n)
    level = x[0]
    for t in range(n):
        fitted[t] = level + (0.5 * b0 * (1 - (1 - alpha) ** t) / alpha if alpha > 0 else 0.0)
        level = alpha * x[t] + (1 - alpha) * level
    if s is not None:
        fitted = fitted + s if additive else fitted * s
    return fitted


def gaussian_aicc(errors, k):
    """AICc of Gaussian one-step errors with their variance concentrated out: -2 log L = n (log(2 pi s2) + 1)."""
    n = len(errors)
    if n - k - 1 <= 0:
        return math.inf
    s2 = max(float(np.mean(errors**2)), 1e-300)
    return n * (math.log(2 * math.pi * s2) + 1) + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def choices(y, h, season, fits):
    """The forecast of whichever of ets, theta and sarima a chooser picks, each chooser knowing only the known rows.

    aicc_choice: the lowest AICc on a common footing. The libraries' own AICc do not compare across the three:
      ETSModel's log-likelihood sums all n rows (initial states are parameters), SARIMAX's with d = 1, D = 1
      sums only the n - 1 - season rows after its diffuse start (the likelihood of the differences), and
      ThetaModel has none. A -2 log L over fewer rows is lower by about (1 + season) (1 + log(2 pi s2)), an
      amount that depends on the series' units, so which one wins would too. So each model's in-sample
      one-step errors on the series' own scale (ETS: its fitted values; SARIMA: its one-step predictions;
      Theta: theta_one_step) go through one Gaussian likelihood, variance concentrated out (ETSModel's own
      formula), over the same rows: those after SARIMA's diffuse start (1 + season, or 1), which every model
      forecasts from earlier rows. k counts what each estimated, the variance included: ETS its df_model
      (smoothing parameters and initial states), SARIMA its df_model (ARMA coefficients, trend), Theta alpha,
      the slope b0 and, when it deseasonalised, season - 1 indices (its initial level is the first value, not
      estimated). Theta's likelihood is that of SES with drift, the state-space model the Theta method is
      (Hyndman & Billah 2003), with statsmodels' two-step estimates of alpha and b0, not ARIMA(0,1,1)'s MLE.
      Still only an approximation of likelihood comparability: SARIMA's exact likelihood weights its early
      rows by their larger variance, and this one does not.
    library_aicc_choice: the lowest AICc as each library reports it (Theta's: the ARIMA(0,1,1) with drift of
      ThetaModel(use_mle=True) on the deseasonalised series), kept to show what the literal reading gives.
    holdout_choice: the lowest MAE on the last h known rows, each model fitted (its form chosen again) on
      the rows before them; the winner's forecast is the one fitted on all known rows.
    """
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    names = [n for n in ("ets", "theta", "sarima") if n in fits]
    if not names:
        return {}
    out = {}

    def pick(key, criteria, started):
        finite = {n: v for n, v in criteria.items() if v is not None and np.isfinite(v)}
        if not finite:
            out[key] = {"error": f"no finite criterion among {names}"}
            return
        chose = min(finite, key=finite.get)
        pred = np.asarray(fits[chose].forecast(h)).tolist()
        out[key] = {"pred": pred, "seconds": time.time() - started, "chose": chose, "criteria": {n: round(v, 4) for n, v in finite.items()}}

    started = time.time()
    burn = 1 + season if season > 1 else 1  # SARIMAX's loglikelihood_burn for this grid: d + D * season
    criteria = {}
    for name in names:
        res = fits[name]
        if name == "theta":
            s, _ = theta_season(res, len(y))
            errors, k = y - theta_one_step(res, y), 3 + (0 if s is None else res.model.period - 1)
        else:
            errors, k = y - np.asarray(res.fittedvalues), int(res.df_model)
        criteria[name] = gaussian_aicc(errors[burn:], k)
    pick("aicc_choice", criteria, started)

    started = time.time()
    criteria = {}
    for name in names:
        if name != "theta":
            criteria[name] = float(fits[name].aicc)
            continue
        x, _, _ = theta_adjusted(fits["theta"], y)
        try:
            criteria[name] = float(SARIMAX(x, order=(0, 1, 1), trend="c").fit(disp=False).aicc)
        except Exception:
            pass
    pick("library_aicc_choice", criteria, started)

    started = time.time()
    if len(y) - h >= 10:
        criteria = {}
        for name, fit in (("ets", ets_fit), ("theta", theta_fit), ("sarima", sarima_fit)):
            if name not in names:
                continue
            try:
                criteria[name] = float(np.mean(np.abs(np.asarray(fit(y[:-h], season).forecast(h)) - y[-h:])))
            except Exception:
                continue
        pick("holdout_choice", criteria, started)
    return out


MAX_KNOWN_ROWS = 100_000
TIME_LIMIT = int(os.environ.get("BENCH_PEERS_TIME_LIMIT", "300"))


class TimedOut(BaseException):
    """A BaseException, so that the fits' own `except Exception` (a grid skipping a failed form) cannot
    swallow it and run on past the limit."""


def bounded(fn):
    """fn() within TIME_LIMIT seconds (SIGALRM: statsmodels' fits return to the interpreter often enough)."""
    import signal

    def expire(signum, frame):
        raise TimedOut(f"timed out after {TIME_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TIME_LIMIT)
    started = time.time()
    try:
        return {"pred": [float(v) for v in np.asarray(fn())], "seconds": time.time() - started}
    except TimedOut as e:
        return {"error": str(e), "timed_out": True, "seconds": time.time() - started}
    except Exception as e:  # a peer that fails is reported, not fatal
        return {"error": repr(e), "seconds": time.time() - started}
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def fourier_terms(n, start, period, k):
    """sin/cos pairs j = 1..k of rows start..start+n-1 for one period (R forecast's fourier())."""
    t = np.arange(start, start + n, dtype=float)
    return np.column_stack([f(2 * math.pi * j * t / period) for j in range(1, k + 1) for f in (np.sin, np.cos)])


def subdaily_models(s, train, test):
    """The sub-daily peers of the module's docstring on the known rows (y) and a horizon of len(test)."""
    from statsmodels.tsa.seasonal import STL
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    y = np.array([s["y"][i] for i in train], dtype=float)[-MAX_KNOWN_ROWS:]
    h = len(test)
    periods = s["time"]["periods"]
    longest = periods[-1]
    out = {}

    stl = {}

    def adjusted():
        if "fit" not in stl:
            stl["fit"] = STL(y, period=longest, robust=True).fit()
        seasonal = np.asarray(stl["fit"].seasonal)
        # The seasonal component goes on as its last cycle, repeated (STLForecast's seasonal naive).
        return y - seasonal, np.array([seasonal[len(y) - longest + (i % longest)] for i in range(h)])

    def stl_with(fit):
        x, season = adjusted()
        return np.asarray(fit(x, 1).forecast(h)) + season

    out["stl_ets"] = bounded(lambda: stl_with(ets_fit))
    out["stl_arima"] = bounded(lambda: stl_with(sarima_fit))

    def harmonic():
        grids = [[k for k in ((3, 6, 10) if i == 0 else (2, 5)) if 2 * k <= p] for i, p in enumerate(periods)]
        best = None
        for ks in ([a, b] for a in grids[0] for b in grids[-1]) if len(periods) > 1 else ([a] for a in grids[0]):
            X = np.hstack([fourier_terms(len(y), 0, p, k) for p, k in zip(periods, ks)])
            try:
                m = SARIMAX(y, exog=X, order=(1, 0, 1), trend="c").fit(disp=False, maxiter=200)
            except Exception:
                continue
            if best is None or m.aicc < best[0].aicc:
                best = (m, ks)
        if best is None:
            raise ValueError("no harmonic regression could be fitted")
        m, ks = best
        Xf = np.hstack([fourier_terms(h, len(y), p, k) for p, k in zip(periods, ks)])
        return m.forecast(h, exog=Xf)

    out["sarima"] = bounded(harmonic)
    return out


def main():
    sets = json.load(open(sys.argv[1]))
    result = {}
    for s in sets:
        hidden = set(s["hidden"])
        train = [i for i in range(len(s["y"])) if i not in hidden]
        test = list(s["hidden"])
        assert all(s["y"][i] is None for i in test), "rows to forecast must arrive without their values"
        if s.get("time") and s["time"].get("periods"):
            result[s["id"]] = subdaily_models(s, train, test)
            print(f"peers: {s['id']} done", file=sys.stderr)
            continue
        X = features(s)
        out = sklearn_models(s, X, train, test)
        if s.get("time") and s["task"] == "regression":
            out.update(statsmodels_models(s, train, test))
        result[s["id"]] = out
        print(f"peers: {s['id']} done", file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
