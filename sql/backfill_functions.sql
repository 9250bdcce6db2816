-- SPDX-License-Identifier: ISC
-- Functions of hookinbox-backfill, recreated on every install run.
--
-- Both are SECURITY DEFINER (owned by hookinbox_owner) so that the
-- backfill's role needs nothing but EXECUTE on them: it learns which
-- delivery keys are present, never a body, and it can add rows marked as
-- backfilled, never change or delete one.

-- Which of p_event_id this endpoint has stored under its provider, account
-- and environment: in the inbox, or, for a signed id, in the ledger of
-- deleted rows (a delivered and purged event is not stored again).  A NULL
-- p_endpoint (the older form below) counts any endpoint's row and no ledger.
create or replace function hookinbox.backfill_known(
	p_endpoint text, p_provider text, p_account text, p_environment text, p_event_id text[])
returns setof text
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
	select i.event_id from hookinbox.inbox i
	 where i.provider = p_provider and i.account = p_account
	   and i.environment = p_environment and i.event_id = any (p_event_id)
	   and (p_endpoint is null or i.endpoint = p_endpoint) and i.review_of is null
	union
	select e.id from unnest(p_event_id) e(id)
	 where exists (select 1 from hookinbox.ledger l
			where l.endpoint = p_endpoint
			  and l.digest = hookinbox.key_digest(p_provider, p_account, p_environment, e.id));
$$;

-- the form hookinbox-backfill before the ledger calls (no endpoint: any
-- endpoint's row counts), kept so that the schema can be upgraded first
create or replace function hookinbox.backfill_known(
	p_provider text, p_account text, p_environment text, p_event_id text[])
returns setof text
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
	select hookinbox.backfill_known(null, p_provider, p_account, p_environment, p_event_id);
$$;

-- Store one event the provider's API listed, under the delivery key a live
-- delivery of it has, marked backfilled_at = now(), through accept_batch():
-- the same replay defence and ledger as a posted delivery.  Where the
-- provider does not sign its delivery id (p_body_dedup: GitHub), the body
-- the API returned is the signed content, so a captured request replayed
-- under a fresh id later is a duplicate of this row; content seen before
-- (stored, or purged and in the ledger) is not stored again.  When the key
-- or the content is known, nothing is stored and the first id is returned
-- with duplicate = true, as accept_batch() answers a redelivery.
create or replace function hookinbox.backfill_store(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_note text, p_body_dedup boolean,
	out id bigint, out duplicate boolean)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
	select b.id, b.duplicate into id, duplicate
	  from hookinbox.accept_batch(array[p_endpoint], array[p_provider], array[p_account],
		array[p_environment], array[p_event_id], array[p_event_type], array[p_object_id],
		array[p_event_version], array[p_headers], array[p_body], array[p_body_dedup],
		array[null::bytea], array[p_note]) b;
	if not duplicate then
		update hookinbox.inbox i set backfilled_at = now() where i.id = backfill_store.id;
	end if;
end
$$;

-- the form hookinbox-backfill before the ledger calls: its providers' ids
-- were taken as signed
create or replace function hookinbox.backfill_store(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_note text,
	out id bigint, out duplicate boolean)
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
	select b.id, b.duplicate
	  from hookinbox.backfill_store(p_endpoint, p_provider, p_account, p_environment,
		p_event_id, p_event_type, p_object_id, p_event_version, p_headers, p_body,
		p_note, false) b;
$$;
