-- Grants for the worker's tables (migration 002), (re)granted on every run.
-- The worker reads and works the queue; it cannot change the schema or
-- delete history (the retention purge runs as hookinbox_admin).
grant select, insert, update on hookinbox.action, hookinbox.object_state to hookinbox_worker;
grant usage on sequence hookinbox.action_id_seq to hookinbox_worker, hookinbox_admin;
grant select, insert, update, delete on hookinbox.action, hookinbox.object_state to hookinbox_admin;
grant execute on function hookinbox.action_key(text, text, text, text, text, text, text, text),
	hookinbox.fan_out(bigint[], bigint[], text[], text[], boolean[], integer[]),
	hookinbox.claim_actions(integer, integer, integer),
	hookinbox.renew_leases(bigint[], uuid[], integer),
	hookinbox.record_actions(bigint[], uuid[], text[], integer[], text[], text[], double precision[]),
	hookinbox.action_event(bigint)
	to hookinbox_worker, hookinbox_admin;
