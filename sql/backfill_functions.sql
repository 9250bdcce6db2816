-- SPDX-License-Identifier: ISC
-- Functions of hookinbox-backfill, recreated on every install run.
--
-- Both are SECURITY DEFINER (owned by hookinbox_owner) so that the
-- backfill's role needs nothing but EXECUTE on them: it learns which
-- delivery keys are present, never a body, and it can add rows marked as
-- backfilled, never change or delete one.

-- Which of p_event_id are in the inbox under this provider, account and
-- environment (the delivery key without its event id).
create or replace function hookinbox.backfill_known(
	p_provider text, p_account text, p_environment text, p_event_id text[])
returns setof text
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
	select i.event_id from hookinbox.inbox i
	 where i.provider = p_provider and i.account = p_account
	   and i.environment = p_environment and i.event_id = any (p_event_id)
	   and i.review_of is null;
$$;

-- Store one event the provider's API listed, under the delivery key a live
-- delivery of it has, marked backfilled_at = now().  When that key is
-- present already (delivered, or backfilled by a run that overlapped) the
-- row is left alone and its id is returned with duplicate = true, as
-- accept_batch() answers a redelivery.  No body dedup: the API's id is the
-- provider's own, not an unsigned header of a request.
create or replace function hookinbox.backfill_store(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_note text,
	out id bigint, out duplicate boolean)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
	insert into hookinbox.inbox as i (endpoint, provider, account, environment,
		event_id, event_type, object_id, event_version, body_sha256, body_dedup,
		intake_note, headers, body, backfilled_at)
	values (p_endpoint, p_provider, p_account, p_environment, p_event_id, p_event_type,
		p_object_id, p_event_version, sha256(p_body), false, p_note,
		coalesce(p_headers, '{}'), p_body, now())
	on conflict (provider, account, environment, event_id, endpoint) where review_of is null
	do nothing
	returning i.id into id;
	duplicate := id is null;
	if duplicate then
		select i.id into id from hookinbox.inbox i
		 where i.provider = p_provider and i.account = p_account
		   and i.environment = p_environment and i.event_id = p_event_id
		   and i.endpoint = p_endpoint and i.review_of is null;
	end if;
	if id is null then
		-- the conflicting row was purged between the two statements
		raise exception 'delivery key conflict could not be resolved' using errcode = '40001';
	end if;
end
$$;
