# One R fit bounded in time, shared by the benchmarks' R peers (peers.R, panels.R): the fit runs in a forked
# child (parallel::mcparallel) killed after `limit` seconds, since setTimeLimit() cannot interrupt compiled
# code and one stuck fit must not hold the run. Answers list(status, seconds, pred).
limit <- as.numeric(Sys.getenv("BENCH_PEERS_TIME_LIMIT", "300"))

bounded <- function(fit) {
  started <- Sys.time()
  job <- parallel::mcparallel(try(as.numeric(fit()), silent = TRUE), silent = TRUE)
  result <- parallel::mccollect(job, wait = FALSE, timeout = limit)
  seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))
  if (is.null(result)) {
    tools::pskill(job$pid)
    parallel::mccollect(job, wait = FALSE, timeout = 1)
    return(list(status = sprintf("timed out after %g s", limit), seconds = seconds, pred = numeric(0)))
  }
  value <- result[[1]]
  if (inherits(value, "try-error") || is.null(value)) {
    return(list(status = paste("error:", gsub("[\t\r\n]+", " ", as.character(value))), seconds = seconds, pred = numeric(0)))
  }
  list(status = "ok", seconds = seconds, pred = value)
}
