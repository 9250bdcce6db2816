-- Functions of the intake path, recreated on every install run.
--
-- accept() is SECURITY DEFINER so that the responder's role needs nothing
-- but EXECUTE on it: it cannot read bodies or touch any table.

create or replace function hookinbox.accept(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_body_dedup boolean,
	out id bigint, out duplicate boolean)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
	v_hash bytea := sha256(p_body);
begin
	-- Two attempts: a conflicting row can vanish between the insert and the
	-- lookup only if the retention purge deleted it in between.
	for attempt in 1..2 loop
		insert into hookinbox.inbox as i (endpoint, provider, account, environment, event_id,
			event_type, object_id, event_version, body_sha256, body_dedup, headers, body)
		values (p_endpoint, p_provider, p_account, p_environment, p_event_id,
			p_event_type, p_object_id, p_event_version, v_hash, p_body_dedup,
			coalesce(p_headers, '{}'), p_body)
		on conflict do nothing
		returning i.id into id;
		if id is not null then
			duplicate := false;
			return;
		end if;
		-- A new statement sees the row a concurrent delivery committed.
		select i.id into id from hookinbox.inbox i
		 where i.provider = p_provider and i.account = p_account
		   and i.environment = p_environment and i.event_id = p_event_id;
		if id is null and p_body_dedup then
			select i.id into id from hookinbox.inbox i
			 where i.endpoint = p_endpoint and i.body_sha256 = v_hash and i.body_dedup;
		end if;
		if id is not null then
			duplicate := true;
			return;
		end if;
	end loop;
	raise exception 'delivery key conflict could not be resolved' using errcode = '40001';
end
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
