-- Functions of the intake path, recreated on every install run.
--
-- accept_batch() is SECURITY DEFINER so that the responder's role needs
-- nothing but EXECUTE on it: it cannot read bodies or touch any table.

-- accept_batch() stores deliveries as if accept() ran for each in turn, in
-- the caller's one transaction: the responder's group commit sends whatever
-- queued up as one call, so the batch costs one statement and one commit,
-- and a single delivery is a batch of one.  Row k of the result answers
-- delivery k.
create or replace function hookinbox.accept_batch(
	p_endpoint text[], p_provider text[], p_account text[], p_environment text[],
	p_event_id text[], p_event_type text[], p_object_id text[], p_event_version bigint[],
	p_headers jsonb[], p_body bytea[], p_body_dedup boolean[],
	out id bigint, out duplicate boolean)
returns setof record
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
	v_hash bytea;
begin
	for k in 1 .. coalesce(array_length(p_event_id, 1), 0) loop
		v_hash := sha256(p_body[k]);
		id := null;
		-- Two attempts: a conflicting row can vanish between the insert and
		-- the lookup only if the retention purge deleted it in between.
		<<attempts>>
		for attempt in 1..2 loop
			insert into hookinbox.inbox as i (endpoint, provider, account, environment,
				event_id, event_type, object_id, event_version, body_sha256, body_dedup,
				headers, body)
			values (p_endpoint[k], p_provider[k], p_account[k], p_environment[k],
				p_event_id[k], p_event_type[k], p_object_id[k], p_event_version[k], v_hash,
				p_body_dedup[k], coalesce(p_headers[k], '{}'), p_body[k])
			on conflict do nothing
			returning i.id into id;
			if id is not null then
				duplicate := false;
				exit attempts;
			end if;
			-- A new statement sees the row a concurrent delivery (or an
			-- earlier one of this batch) stored.
			select i.id into id from hookinbox.inbox i
			 where i.provider = p_provider[k] and i.account = p_account[k]
			   and i.environment = p_environment[k] and i.event_id = p_event_id[k];
			if id is null and p_body_dedup[k] then
				select i.id into id from hookinbox.inbox i
				 where i.endpoint = p_endpoint[k] and i.body_sha256 = v_hash and i.body_dedup;
			end if;
			if id is not null then
				duplicate := true;
				exit attempts;
			end if;
		end loop;
		if id is null then
			raise exception 'delivery key conflict could not be resolved'
				using errcode = '40001';
		end if;
		return next;
	end loop;
end
$$;

-- one delivery, for psql and scripts (the responder calls accept_batch)
create or replace function hookinbox.accept(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_body_dedup boolean,
	out id bigint, out duplicate boolean)
language sql
set search_path = pg_catalog, pg_temp
as $$
	select b.id, b.duplicate
	  from hookinbox.accept_batch(array[p_endpoint], array[p_provider], array[p_account],
		array[p_environment], array[p_event_id], array[p_event_type], array[p_object_id],
		array[p_event_version], array[p_headers], array[p_body], array[p_body_dedup]) b;
$$;

-- count a rejected request (no body, no header, no address is stored)
create or replace function hookinbox.reject(p_endpoint text, p_reason text, p_count bigint default 1)
returns void
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
	insert into hookinbox.rejection (hour, endpoint, reason, count)
	values (date_trunc('hour', now()), left(p_endpoint, 64), left(p_reason, 64), p_count)
	on conflict (hour, endpoint, reason) do update set count = rejection.count + excluded.count;
$$;
