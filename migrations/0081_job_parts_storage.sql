-- why: a job in parts stores megabytes of JSON text once and reads it back within seconds (issue 34)
-- The plan, the global task, each part's task and outcome are written once, read a few times and deleted
-- when the job ends. Postgres compresses such values with pglz by default: 9.2 MB of a part's JSON took
-- 371 ms to insert compressed against 134 ms uncompressed (and 33 ms against 17 ms to read back), time
-- spent on the path between planning and the first part, and between the last part and the assembly.
-- EXTERNAL keeps the values out of line without compressing them.
alter table job_plans alter column plan set storage external;
alter table job_plans alter column global set storage external;
alter table job_parts alter column task set storage external;
alter table job_parts alter column outcome set storage external;
