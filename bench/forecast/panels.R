# Hyndman's forecast package for R fitted per series as the peers of the panel benchmark (issue 33), run by
# bench/forecast/panels.ts with Debian's r-cran-forecast (bench/forecast/install-peers.sh):
#   Rscript bench/forecast/panels.R <series.tsv>
# Input, one series a line (the rows to forecast are not in it, only their count):
#   id <TAB> season (1 = none) <TAB> horizon <TAB> the known values, comma-separated
# Output on stdout, one line per series and model:
#   id <TAB> model <TAB> seconds <TAB> ok | timed out after N s | error: ... <TAB> the forecast, comma-separated
# Models, each on ts(y, frequency = season), with the package's defaults (what a user of it would run):
#   ets          forecast(ets(y))
#   auto_arima   forecast(auto.arima(y))
#   theta        thetaf(y) (seasonally adjusted by classical decomposition where the season tests significant)
#   stlf         stlf(y): STL + ets on the adjusted series; seasonal series with more than two cycles only
#                (stl() needs them), so no line for the others
# Each fit runs in a forked child (parallel::mcparallel) killed after BENCH_PEERS_TIME_LIMIT seconds (default
# 300): setTimeLimit() cannot interrupt compiled code, and one stuck fit must not hold the run.
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1])), "bounded.R"))

for (line in readLines(args[1])) {
  cells <- strsplit(line, "\t", fixed = TRUE)[[1]]
  id <- cells[1]
  season <- as.integer(cells[2])
  h <- as.integer(cells[3])
  values <- as.numeric(strsplit(cells[4], ",", fixed = TRUE)[[1]])
  y <- ts(values, frequency = season)
  models <- list(
    ets = function() forecast(ets(y), h = h)$mean,
    auto_arima = function() forecast(auto.arima(y), h = h)$mean,
    theta = function() thetaf(y, h = h)$mean
  )
  if (season > 1 && length(values) > 2 * season) models$stlf <- function() stlf(y, h = h)$mean
  for (name in names(models)) {
    r <- bounded(models[[name]])
    cat(id, name, sprintf("%.3f", r$seconds), r$status, paste(format(r$pred, digits = 15, trim = TRUE), collapse = ","), sep = "\t")
    cat("\n")
  }
}
