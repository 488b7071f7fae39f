"""sklearn MLPRegressor reference on the shared bench data (bench/.out/regression.csv, written by the TS
benchmarks). Same split (first 80% train, last 20% validation), same min-max input scaling into [-1, 1],
same target scaling into [-0.8, 0.8] (the engine's encoder.ts constants), same hidden layers [16, 16],
batch_size=32, same number of epochs (max_iter); sklearn's defaults otherwise (adam, lr 0.001, relu).
Prints {"samplesEpochsPerSecond", "validationMse"} with MSE in the original units of y.
Run: /usr/bin/python3 bench/train/sklearn_mlp.py [activation] [epochs]
(epochs: default 20; bench/train/run.ts also runs it at the epoch count the engine used, for a like-for-like MSE)
"""
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor

HIDDEN = (16, 16)
EPOCHS = 20
SEED = 12345
OUT_LOW, OUT_HIGH = -0.8, 0.8
CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".out", "regression.csv")

activation = sys.argv[1] if len(sys.argv) > 1 else "relu"
EPOCHS = int(sys.argv[2]) if len(sys.argv) > 2 else EPOCHS
if not os.path.exists(CSV):
    sys.exit("bench/.out/regression.csv is missing: run `npx tsx bench/train/brain-alone.ts` first (it writes it)")
data = np.loadtxt(CSV, delimiter=",", skiprows=1)
n_train = round(len(data) * 0.8)
train, val = data[:n_train], data[n_train:]
x_min, x_max = train[:, :-1].min(axis=0), train[:, :-1].max(axis=0)
y_min, y_max = train[:, -1].min(), train[:, -1].max()
sx = lambda x: 2 * (x - x_min) / (x_max - x_min) - 1
sy = lambda y: OUT_LOW + (y - y_min) / (y_max - y_min) * (OUT_HIGH - OUT_LOW)
uy = lambda v: y_min + (v - OUT_LOW) / (OUT_HIGH - OUT_LOW) * (y_max - y_min)

model = MLPRegressor(hidden_layer_sizes=HIDDEN, activation=activation, batch_size=32, max_iter=EPOCHS,
                     random_state=SEED, shuffle=True, tol=0, n_iter_no_change=EPOCHS + 1)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    started = time.perf_counter()
    model.fit(sx(train[:, :-1]), sy(train[:, -1]))
    elapsed = time.perf_counter() - started
pred = uy(model.predict(sx(val[:, :-1])))
mse = float(np.mean((pred - val[:, -1]) ** 2))
print(json.dumps({"samplesEpochsPerSecond": n_train * model.n_iter_ / elapsed, "validationMse": mse,
                  "epochs": model.n_iter_, "activation": activation}))
