#!/usr/bin/env bash
# The forecast benchmarks' peers from Debian's packages (bench/forecast/peers.py and peers.R), for a fresh
# machine: benchmarks must be reproducible there, and CI does not run them, so nothing else installs these.
#   bash bench/forecast/install-peers.sh        (as root)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# python3-statsmodels / python3-sklearn: peers.py (run by /usr/bin/python3);
# r-cran-forecast: Hyndman's forecast package for R (auto.arima, fourier, stlf, mstl, tbats, snaive), peers.R.
apt-get install -y -qq --no-install-recommends python3-statsmodels python3-sklearn r-cran-forecast
/usr/bin/python3 -c 'import statsmodels, sklearn; print("statsmodels", statsmodels.__version__, "sklearn", sklearn.__version__)'
Rscript -e 'cat("forecast", as.character(packageVersion("forecast")), "\n")'
