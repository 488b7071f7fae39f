-- why: a panel's series choose one structure together between scoring and refitting (issue 33), so a job in parts has four stages
-- Stage 1 the global model's rounds, 2 the groups of series scored, 3 the one choice across the series (it reads
-- every score's answer), 4 the same groups refitted (each reads its score part's task and answer and the choice).
-- A part is claimable once every part of a lower stage of its job is done.
alter table job_parts drop constraint job_parts_stage_check;
alter table job_parts add constraint job_parts_stage_check check (stage between 1 and 4);

-- A job in parts planned before (two stages: its groups scored and refitted in one unit) has no choice to wait
-- for and no refit to assemble: it is planned again. Its parts go, it is Pending as a job handed back at
-- shutdown is, and its run's status record closes as Aborted (a new run opens one).
update stat_records set status = 3, text = 'planned again: jobs in parts gained a choice across the series (migration 0082)', terminated_at = now(), updated_at = now()
  where status = 0 and id in (select stat_id from job_plans where stat_id is not null);
update jobs set status = 1, worker = null, advance = 0, heartbeat_at = null, attempts = greatest(attempts - 1, 0), updated_at = now()
  where status = 2 and id in (select job_id from job_plans);
delete from job_parts;
delete from job_plans;
