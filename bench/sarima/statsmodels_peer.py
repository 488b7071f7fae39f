"""statsmodels SARIMAX peer for bench/sarima/compare.ts (issue 10).

Reads JSON from stdin: [{"name", "train": [...], "h", "season", "grid": bool, "same": orders}] and prints JSON
{name: {config: {"forecast": [...], "seconds": s, "aic": a}}}. Fixed orders a statsmodels user would try
(the airline model, (1,1,1)(0,1,1)s, (1,1,1)(1,1,1)s), the orders our family chose ("same") and, with "grid", the AIC-best model over
(p,1,q)(P,1,Q)s for p in {0,1,2}, q in {0,1}, P, Q in {0,1}.
Run with Debian's python3-statsmodels: /usr/bin/python3.
"""
import itertools
import json
import sys
import time
import warnings

import numpy as np
from statsmodels.tsa.statespace.sarimax import SARIMAX

warnings.filterwarnings("ignore")


def fit(train, order, seasonal):
    start = time.time()
    result = SARIMAX(np.asarray(train, dtype=float), order=order, seasonal_order=seasonal).fit(disp=False)
    return result, time.time() - start


def main():
    jobs = json.load(sys.stdin)
    out = {}
    for job in jobs:
        s, h, train = job["season"], job["h"], job["train"]
        res = {}
        for label, order, seasonal in [
            ("airline (0,1,1)(0,1,1)", (0, 1, 1), (0, 1, 1, s)),
            ("(1,1,1)(0,1,1)", (1, 1, 1), (0, 1, 1, s)),
            ("(1,1,1)(1,1,1)", (1, 1, 1), (1, 1, 1, s)),
        ]:
            r, secs = fit(train, order, seasonal)
            res[label] = {"forecast": r.forecast(h).tolist(), "seconds": secs, "aic": r.aic}
        same = job.get("same")
        if same:
            # Our chosen orders, the same model: our drift is the time index as an exogenous regressor
            # (regression with SARIMA errors), our mean (d + D = 0) SARIMAX's constant.
            o = same
            seasonal = (o["P"], o["D"], o["Q"], o["s"]) if o["s"] > 0 else (0, 0, 0, 0)
            trend = "c" if o["d"] + o["D"] == 0 else "n"
            n = len(train)
            exog = np.arange(n, dtype=float) if o["drift"] else None
            start = time.time()
            r = SARIMAX(np.asarray(train, dtype=float), exog=exog, order=(o["p"], o["d"], o["q"]), seasonal_order=seasonal, trend=trend).fit(disp=False)
            future = np.arange(n, n + h, dtype=float) if o["drift"] else None
            res["same orders as ours"] = {"forecast": r.forecast(h, exog=future).tolist(), "seconds": time.time() - start, "aic": r.aic}
        if job.get("grid"):
            best, total = None, 0.0
            for p, q, P, Q in itertools.product([0, 1, 2], [0, 1], [0, 1], [0, 1]):
                try:
                    r, secs = fit(train, (p, 1, q), (P, 1, Q, s))
                except Exception:  # noqa: BLE001 - a failing order is just not a candidate
                    continue
                total += secs
                if best is None or r.aic < best[0].aic:
                    best = (r, (p, 1, q, P, 1, Q))
            r, o = best
            res["AIC grid (%d,%d,%d)(%d,%d,%d)" % o] = {"forecast": r.forecast(h).tolist(), "seconds": total, "aic": r.aic}
        out[job["name"]] = res
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
