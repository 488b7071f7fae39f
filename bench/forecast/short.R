# Hyndman's forecast package for R on short yearly and quarterly series, the peers of bench/forecast/short.ts,
# with Debian's r-cran-forecast (bench/forecast/install-peers.sh):
#   Rscript bench/forecast/short.R <in.tsv> <out.tsv>
# Input, one series-origin a line (the hidden values are not in it, only their count):
#   id <TAB> frequency (1 yearly, 4 quarterly) <TAB> horizon <TAB> the known values, comma-separated
# Output to <out.tsv>, one line per series-origin and model:
#   id <TAB> model <TAB> seconds <TAB> ok | timed out after N s | error: ... <TAB> the forecast, comma-separated
# Models on ts(y, frequency), each with the package's defaults, as a user of it would run them: auto.arima, ets,
# thetaf, rwf(drift = TRUE) and naive. The last two are the drift and last-value forecasts short.ts computes
# itself; they are fitted here too so that a difference between the two sides shows up as a check.
# Each fit runs bounded in time (bounded.R, BENCH_PEERS_TIME_LIMIT seconds, default 300).
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1])), "bounded.R"))

series <- read.delim(args[1], header = FALSE, sep = "\t", colClasses = "character", col.names = c("id", "frequency", "h", "values"))
out <- file(args[2], open = "w")
for (i in seq_len(nrow(series))) {
  y <- ts(as.numeric(strsplit(series$values[i], ",", fixed = TRUE)[[1]]), frequency = as.integer(series$frequency[i]))
  h <- as.integer(series$h[i])
  fits <- list(
    auto_arima = function() forecast(auto.arima(y), h = h)$mean,
    ets = function() forecast(ets(y), h = h)$mean,
    theta = function() thetaf(y, h = h)$mean,
    drift = function() rwf(y, h = h, drift = TRUE)$mean,
    naive = function() naive(y, h = h)$mean
  )
  lines <- vapply(names(fits), function(model) {
    r <- bounded(fits[[model]])
    paste(series$id[i], model, sprintf("%.3f", r$seconds), r$status, paste(format(r$pred, digits = 15, trim = TRUE), collapse = ","), sep = "\t")
  }, character(1))
  writeLines(lines, out)
  flush(out)
}
close(out)
