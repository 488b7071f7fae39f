# Hyndman's forecast package for R as peers of the sub-daily corpus (issue 28), run by bench/forecast/subdaily.ts
# with Debian's r-cran-forecast (bench/forecast/install-peers.sh):
#   Rscript bench/forecast/peers.R <sets.tsv>
# Input, one series a line (written by subdaily.ts rPeers; the rows to forecast are not in it, only their count):
#   id <TAB> periods, shortest first (e.g. 24,168) <TAB> horizon <TAB> the known values, comma-separated
# Output on stdout, one line per series and model:
#   id <TAB> model <TAB> seconds <TAB> ok | timed out after N s | error: ... <TAB> the forecast, comma-separated
# Models, on msts(y, seasonal.periods = periods):
#   snaive_<p>     snaive() of each period p;
#   stlf           stlf(): mstl() (one STL per period, the longest last) and ets() on the seasonally adjusted series;
#   stlf_arima     stlf(method = "arima"): the same with auto.arima() on the adjusted series;
#   arima_fourier  auto.arima(seasonal = FALSE) with fourier() regressors of each period (dynamic harmonic
#                  regression, fpp3 section 12.1), K per period by the lowest AICc over a small grid (day: 3, 6,
#                  10; week: 2, 5, 10) of regressions with ARMA(1,1) errors, then auto.arima for the errors;
#   tbats          tbats(use.parallel = FALSE): the machine's two cores are shared.
# Each model sees at most the last 100,000 known rows (the engine's cap; the sets hold fewer) and runs in a
# forked child (parallel::mcparallel) killed after BENCH_PEERS_TIME_LIMIT seconds (default 300), so a model
# that runs out of time is reported as such instead of holding the run: setTimeLimit() cannot interrupt
# compiled code.
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
max_rows <- 100000

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1])), "bounded.R"))

harmonic <- function(y, periods, h) {
  grids <- lapply(seq_along(periods), function(i) {
    ks <- if (i == 1) c(3, 6, 10) else c(2, 5, 10)
    ks[2 * ks <= periods[i]]
  })
  # K by the AICc of one ARMA(1,1)-error regression per pair (a full auto.arima per pair took over 200 s
  # a series on this machine), then auto.arima chooses the errors' order for the chosen K.
  best <- NULL
  for (ks in as.list(as.data.frame(t(expand.grid(grids))))) {
    fit <- tryCatch(Arima(y, order = c(1, 0, 1), xreg = fourier(y, K = ks), method = "CSS-ML"), error = function(e) NULL)
    if (!is.null(fit) && (is.null(best) || fit$aicc < best$aicc)) best <- list(aicc = fit$aicc, ks = ks)
  }
  if (is.null(best)) stop("no harmonic regression could be fitted")
  fit <- auto.arima(y, xreg = fourier(y, K = best$ks), seasonal = FALSE)
  forecast(fit, xreg = fourier(y, K = best$ks, h = h))$mean
}

for (line in readLines(args[1])) {
  cells <- strsplit(line, "\t", fixed = TRUE)[[1]]
  id <- cells[1]
  periods <- as.numeric(strsplit(cells[2], ",", fixed = TRUE)[[1]])
  h <- as.integer(cells[3])
  values <- as.numeric(strsplit(cells[4], ",", fixed = TRUE)[[1]])
  values <- tail(values, max_rows)
  y <- msts(values, seasonal.periods = periods)
  models <- list()
  for (p in periods) {
    local({
      period <- p
      models[[paste0("snaive_", period)]] <<- function() snaive(ts(values, frequency = period), h = h)$mean
    })
  }
  models$stlf <- function() stlf(y, h = h)$mean
  models$stlf_arima <- function() stlf(y, h = h, method = "arima")$mean
  models$arima_fourier <- function() harmonic(y, periods, h)
  models$tbats <- function() forecast(tbats(y, use.parallel = FALSE), h = h)$mean
  for (name in names(models)) {
    r <- bounded(models[[name]])
    cat(id, name, sprintf("%.2f", r$seconds), r$status, paste(format(r$pred, digits = 15, trim = TRUE), collapse = ","), sep = "\t")
    cat("\n")
    message("peers.R: ", id, " ", name, " ", r$status, " in ", sprintf("%.1f", r$seconds), " s")
  }
}
