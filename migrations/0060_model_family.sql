-- why: App record `ModelFamily` (an addition, issue 10): which model families compete for a job's forecast.
-- 'auto' = every family that applies, chosen by rolling-origin backtest; 'network' = the legacy single brain.js
-- network. POST /app stores '' as 'auto', so a record written before this column existed reads as automatic.
alter table app_records add column model_family text not null default 'auto' check (model_family in ('auto', 'network'));
