-- why: the forecasting engine explains each finished run (which model won per output, every candidate's backtest
-- error next to the best naive baseline's, scheme, horizon, frequency); GET /jobs_progress progress=2 shows it.
-- The engine's SelectionReport JSON as it came (src/training/types.ts); null until a run of the job finishes.
alter table jobs add column selection jsonb;
