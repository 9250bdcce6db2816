-- SPDX-License-Identifier: ISC
-- Grants for the worker's tables (migration 002), (re)granted on every run.
-- The worker reads and works the queue; it cannot change the schema or
-- delete history (the retention purge runs as hookinbox_admin).
grant select, insert, update on hookinbox.action, hookinbox.object_state to hookinbox_worker;
-- migration 005: the worker records collapses; it reads the schema version
grant select, insert on hookinbox.action_collapse to hookinbox_worker;
grant select on hookinbox.action_history, hookinbox.schema_migrations to hookinbox_worker;
grant select, insert, update, delete on hookinbox.action_collapse, hookinbox.action_history
	to hookinbox_admin;
grant usage on sequence hookinbox.action_history_id_seq to hookinbox_admin;
grant usage on sequence hookinbox.action_id_seq to hookinbox_worker, hookinbox_admin;
grant select, insert, update, delete on hookinbox.action, hookinbox.object_state to hookinbox_admin;
grant execute on function hookinbox.action_key(text, text, text, text, text, text, text, text),
	hookinbox.inbox_action_key(text, text, hookinbox.inbox),
	hookinbox.insert_actions(bigint[], text[], text[], boolean[], boolean[], integer[], boolean),
	hookinbox.fan_out(bigint[], bigint[], text[], text[], boolean[], integer[]),
	hookinbox.fan_out(bigint[], bigint[], text[], text[], boolean[], boolean[], integer[]),
	hookinbox.fan_out(bigint[], bigint[], text[], text[], boolean[], boolean[], integer[], text),
	hookinbox.route_topup(bigint[], bigint[], text[], text[], boolean[], boolean[], integer[], text),
	hookinbox.routes_differ_now(text),
	hookinbox.route_fingerprints(text),
	hookinbox.routes_name(text, text),
	hookinbox.superseding_action(text, text, bigint, bigint),
	hookinbox.claim_actions(integer, integer, integer),
	hookinbox.claim_actions(integer, integer, integer, text[]),
	hookinbox.claim_actions(integer, integer, integer, text[], integer[]),
	hookinbox.route_report(text, text, double precision, text),
	hookinbox.probe_first(text),
	hookinbox.routes_check(text[], text, integer),
	hookinbox.unserved_routes(text[]),
	hookinbox.release_actions(bigint[], uuid[]),
	hookinbox.renew_leases(bigint[], uuid[], integer),
	hookinbox.record_actions(bigint[], uuid[], text[], integer[], text[], text[], double precision[]),
	hookinbox.action_event(bigint)
	to hookinbox_worker, hookinbox_admin;

-- the operators' steps: hookinbox_admin only (roles.sql grants every
-- function to the worker too; take these back)
revoke execute on function
	hookinbox.find_actions(text[], bigint, text, text, text, timestamptz, timestamptz),
	hookinbox.operate_actions(bigint[], text, text, boolean)
	from hookinbox_worker, public;
grant execute on function
	hookinbox.find_actions(text[], bigint, text, text, text, timestamptz, timestamptz),
	hookinbox.operate_actions(bigint[], text, text, boolean)
	to hookinbox_admin;
revoke execute on procedure hookinbox.purge(integer, integer, integer, bigint, bigint, bigint, bigint, bigint)
	from hookinbox_worker, public;
grant execute on procedure hookinbox.purge(integer, integer, integer, bigint, bigint, bigint, bigint, bigint)
	to hookinbox_admin;
revoke execute on function hookinbox.purge_batch(bigint, bigint, timestamptz, boolean, integer)
	from hookinbox_worker, public;
grant execute on function hookinbox.purge_batch(bigint, bigint, timestamptz, boolean, integer)
	to hookinbox_admin;
-- migration 006: workers report holds and breakers; operators pause routes
grant select, insert, update on hookinbox.route_state, hookinbox.worker_routes to hookinbox_worker;
grant select, insert, update, delete on hookinbox.worker_routes to hookinbox_admin;
revoke execute on function hookinbox.reroute_unrouted(text, text, timestamptz, timestamptz, boolean)
	from hookinbox_worker, public;
grant execute on function hookinbox.reroute_unrouted(text, text, timestamptz, timestamptz, boolean)
	to hookinbox_admin;
grant select, insert, update, delete on hookinbox.route_state to hookinbox_admin;
revoke execute on function hookinbox.route_pause(text, boolean, text) from hookinbox_worker, public;
grant execute on function hookinbox.route_pause(text, boolean, text) to hookinbox_admin;
revoke execute on function hookinbox.route_clear(text, text) from hookinbox_worker, public;
grant execute on function hookinbox.route_clear(text, text), hookinbox.route_known(text)
	to hookinbox_admin;
-- migration 011: events fanned out while routes differ, topped up
grant select, insert, update, delete on hookinbox.route_topup to hookinbox_worker, hookinbox_admin;
revoke execute on function hookinbox.reroute_dispatched(text, text, timestamptz, timestamptz, boolean)
	from hookinbox_worker, public;
grant execute on function hookinbox.reroute_dispatched(text, text, timestamptz, timestamptz, boolean)
	to hookinbox_admin;
