# Hyndman's forecast package for R (8.20, Debian's r-cran-forecast: bench/forecast/install-peers.sh) and base R's
# lm(), the peers WITH known covariates of bench/forecast/drivers.ts:
#   Rscript bench/forecast/drivers.R <cases.tsv>
# Input, one case (a panel or a single series) a line:
#   case <TAB> season (1 = none) <TAB> horizon <TAB> path of the case's CSV
# The CSV: header `id,y,x1,...,xk`, one row per series and date in date order, id = the series' index (0-based);
# y empty (NA) in the last `horizon` rows of every series, the covariates x filled in every row.
# Output on stdout, one line per series and per-series model, or per case and panel model:
#   case <TAB> series index | * (a panel model: the forecasts of every series in index order, h each) <TAB> model
#   <TAB> seconds <TAB> ok | fallback: ... | timed out after N s | error: ... <TAB> the forecast, comma-separated
# Models:
#   arima_xreg  per series: forecast(auto.arima(y, xreg = X), xreg = X_future); where auto.arima with xreg errors
#               (a rank-deficient or constant X, ...), forecast(auto.arima(y)) instead, the status saying
#               `fallback: <the error>`
#   tslm        per series: tslm(y ~ trend + x1 + ... + xk), + season where the season is > 1 and the known part
#               holds two of them; forecast() on the future X
#   fe_levels   per panel: lm(y ~ factor(id) + x1 + ... + xk) on every series' known rows; each series' future from
#               its own intercept and the common slopes (a single series: lm(y ~ x1 + ... + xk))
#   fe_diff     per panel: lm(diff(y) ~ factor(id) + diff(x1) + ...) on every series' known rows (differences
#               within a series), the forecast cumulated from the series' last known value with the future X's
#               differences (the first from the last known row's X); a single series: lm(diff(y) ~ diff(x)...)
# y is put on ts(y, frequency = season). Each fit runs bounded in time (bounded.R, BENCH_PEERS_TIME_LIMIT s).
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1])), "bounded.R"))

emit <- function(case, series, model, r) {
  cat(case, series, model, sprintf("%.3f", r$seconds), r$status, paste(format(r$pred, digits = 15, trim = TRUE), collapse = ","), sep = "\t")
  cat("\n")
}

cases <- read.delim(args[1], header = FALSE, sep = "\t", colClasses = "character", col.names = c("case", "season", "h", "csv"))
for (i in seq_len(nrow(cases))) {
  case <- cases$case[i]
  season <- as.integer(cases$season[i])
  h <- as.integer(cases$h[i])
  d <- read.csv(cases$csv[i])
  xnames <- setdiff(names(d), c("id", "y"))
  ids <- sort(unique(d$id))

  for (id in ids) {
    s <- d[d$id == id, , drop = FALSE]
    n <- nrow(s) - h
    y <- ts(s$y[seq_len(n)], frequency = season)
    X <- as.matrix(s[seq_len(n), xnames, drop = FALSE])
    Xf <- as.matrix(s[n + seq_len(h), xnames, drop = FALSE])
    # c(flag, forecast): flag 1 = auto.arima without xreg (the message kept in a global for the status).
    fallback <- ""
    arima <- function() {
      out <- tryCatch(c(0, forecast(auto.arima(y, xreg = X), xreg = Xf, h = h)$mean), error = function(e) e)
      if (inherits(out, "error")) {
        msg <- gsub("[\t\r\n]+", " ", conditionMessage(out))
        return(c(1, forecast(auto.arima(y), h = h)$mean, NA, utf8ToInt(substr(msg, 1, 120))))
      }
      out
    }
    r <- bounded(arima)
    if (r$status == "ok") {
      if (r$pred[1] == 1) {
        msg <- intToUtf8(r$pred[(h + 3):length(r$pred)])
        r$status <- paste("fallback:", msg)
      }
      r$pred <- r$pred[2:(h + 1)]
    }
    emit(case, id, "arima_xreg", r)

    dat <- ts(cbind(y = as.numeric(y), X), frequency = season)
    colnames(dat) <- c("y", xnames)
    seasonal <- season > 1 && n >= 2 * season
    f <- as.formula(paste("y ~ trend +", if (seasonal) "season +" else "", paste(xnames, collapse = " + ")))
    newdata <- as.data.frame(Xf)
    colnames(newdata) <- xnames
    emit(case, id, "tslm", bounded(function() forecast(tslm(f, data = dat), newdata = newdata, h = h)$mean))
  }

  single <- length(ids) == 1
  known <- !is.na(d$y)
  d$id <- factor(d$id, levels = ids)
  fe <- function() {
    f <- as.formula(paste("y ~", if (single) "" else "id +", paste(xnames, collapse = " + ")))
    fit <- lm(f, data = d[known, , drop = FALSE])
    unlist(lapply(ids, function(id) predict(fit, newdata = d[d$id == id & !known, , drop = FALSE])))
  }
  emit(case, "*", "fe_levels", bounded(fe))

  # Differences within each series: row t minus row t - 1 of the same series.
  dd <- do.call(rbind, lapply(ids, function(id) {
    s <- d[d$id == id, , drop = FALSE]
    out <- data.frame(id = s$id[-1], y = diff(s$y), known = known[d$id == id][-1])
    for (x in xnames) out[[x]] <- diff(s[[x]])
    out
  }))
  fe_diff <- function() {
    f <- as.formula(paste("y ~", if (single) "" else "id +", paste(xnames, collapse = " + ")))
    fit <- lm(f, data = dd[dd$known & !is.na(dd$y), , drop = FALSE])
    unlist(lapply(ids, function(id) {
      s <- d[d$id == id, , drop = FALSE]
      last <- s$y[nrow(s) - h]
      last + cumsum(predict(fit, newdata = dd[dd$id == id & !dd$known, , drop = FALSE]))
    }))
  }
  emit(case, "*", "fe_diff", bounded(fe_diff))
}
