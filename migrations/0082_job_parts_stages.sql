-- why: a panel's series choose one structure together between scoring and refitting (issue 33), so a job in parts has four stages
-- Stage 1 the global model's rounds, 2 the groups of series scored, 3 the one choice across the series (it reads
-- every score's answer), 4 the same groups refitted (each reads its score part's task and answer and the choice).
-- A part is claimable once every part of a lower stage of its job is done.
alter table job_parts drop constraint job_parts_stage_check;
alter table job_parts add constraint job_parts_stage_check check (stage between 1 and 4);
