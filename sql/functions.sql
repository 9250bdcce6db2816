-- SPDX-License-Identifier: ISC
-- Functions of the intake path, recreated on every install run.
--
-- accept_batch() is SECURITY DEFINER so that the responder's role needs
-- nothing but EXECUTE on it: it cannot read bodies or touch any table.

-- The ledger's helpers run inside accept_batch() and the backfill's
-- functions (SECURITY DEFINER, their search_path set): without a SET of
-- their own they are inlined or keep their plans; the digests are stable
-- (convert_to() is), so that they can be inlined.  Every name is
-- schema-qualified.
--
-- What identifies a delivery whose id is signed, in the ledger (migration
-- 010): its delivery key.  The prefix keeps it apart from content hashes,
-- and text cannot hold the NUL that separates the parts.
create or replace function hookinbox.key_digest(
	p_provider text, p_account text, p_environment text, p_event_id text)
returns bytea
language sql stable strict parallel safe
as $$
	select sha256(convert_to('hookinbox-key', 'UTF8') || '\x00'::bytea
		|| convert_to(p_provider, 'UTF8') || '\x00'::bytea || convert_to(p_account, 'UTF8')
		|| '\x00'::bytea || convert_to(p_environment, 'UTF8') || '\x00'::bytea
		|| convert_to(p_event_id, 'UTF8'));
$$;

-- A copy held for review is signed content under an unsigned type of the
-- request's choosing; its ledger entry carries the type too, so that a
-- replay of a dismissed copy is its duplicate while the first row stays.
create or replace function hookinbox.held_digest(p_dedup bytea, p_event_type text)
returns bytea
language sql stable parallel safe
as $$
	select sha256(p_dedup || '\x00'::bytea || convert_to(coalesce(p_event_type, ''), 'UTF8'));
$$;

-- Whatever leaves the inbox leaves its signed identity in the ledger, in
-- the same transaction: purge.sql's batches, dismissed held copies, a
-- delete by hand.  The lowest id of a digest answers its replays (with its
-- type, for a content digest).  A held copy leaves its typed digest too.
create or replace function hookinbox.ledger_remember()
returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
	insert into hookinbox.ledger as l (endpoint, digest, first_id, seen, first_type)
	select g.endpoint, g.digest, min(g.id), min(g.received_at)::date,
	       (array_agg(g.event_type order by g.id))[1]
	  from (select o.endpoint, o.id, o.received_at,
		       case when o.body_dedup then coalesce(o.signed_sha256, o.body_sha256)
			    else hookinbox.key_digest(o.provider, o.account, o.environment, o.event_id)
		       end as digest,
		       case when o.body_dedup then coalesce(o.event_type, '') end as event_type
		  from gone o
		union all
		select o.endpoint, o.id, o.received_at,
		       hookinbox.held_digest(coalesce(o.signed_sha256, o.body_sha256), o.event_type),
		       null
		  from gone o
		 where o.body_dedup and o.review_of is not null) g
	 group by g.endpoint, g.digest
	on conflict (endpoint, digest) do update
	   set first_id = excluded.first_id, first_type = excluded.first_type,
	       seen = least(l.seen, excluded.seen)
	 where excluded.first_id < l.first_id;
	return null;
end
$$;

drop trigger if exists inbox_ledger on hookinbox.inbox;
create trigger inbox_ledger after delete on hookinbox.inbox
	referencing old table as gone
	for each statement execute function hookinbox.ledger_remember();

-- The id a delivery is answered with as a duplicate when the ledger knows
-- what it carries and no inbox row answers it (its row was purged), or
-- NULL: a replay of signed content past the dedup horizon stores nothing.
-- Where the id is signed: the delivery key's first id.  Where it is not,
-- unless a row of this content and type is there: a deleted held copy of
-- this type, else the content's first id when it came under this type and
-- its first row is gone (under another type accept_batch() holds it).
create or replace function hookinbox.ledger_first(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_body_dedup boolean, p_dedup bytea)
returns bigint
language plpgsql stable
as $$
declare
	v_id bigint;
begin
	-- plpgsql keeps each statement's plan for the session; every inbox
	-- lookup names review_of so that one of the partial unique indexes
	-- serves it
	if not p_body_dedup then
		select l.first_id into v_id from hookinbox.ledger l
		 where l.endpoint = p_endpoint
		   and l.digest = hookinbox.key_digest(p_provider, p_account, p_environment, p_event_id);
		if v_id is null or exists (select 1 from hookinbox.inbox i
				where i.provider = p_provider and i.account = p_account
				  and i.environment = p_environment and i.event_id = p_event_id
				  and i.endpoint = p_endpoint and i.review_of is null) then
			return null;
		end if;
		return v_id;
	end if;
	select l.first_id into v_id from hookinbox.ledger l
	 where l.endpoint = p_endpoint and l.digest = hookinbox.held_digest(p_dedup, p_event_type);
	if v_id is null then
		select l.first_id into v_id from hookinbox.ledger l
		 where l.endpoint = p_endpoint and l.digest = p_dedup
		   and l.first_type = coalesce(p_event_type, '');
		if v_id is not null and exists (select 1 from hookinbox.inbox i
				where i.endpoint = p_endpoint and i.body_dedup and i.review_of is null
				  and coalesce(i.signed_sha256, i.body_sha256) = p_dedup) then
			return null;
		end if;
	end if;
	if v_id is null or exists (select 1 from hookinbox.inbox i
			where i.endpoint = p_endpoint and i.body_dedup and i.review_of is not null
			  and coalesce(i.signed_sha256, i.body_sha256) = p_dedup
			  and coalesce(i.event_type, '') = coalesce(p_event_type, ''))
	   or exists (select 1 from hookinbox.inbox i
			where i.endpoint = p_endpoint and i.body_dedup and i.review_of is null
			  and coalesce(i.signed_sha256, i.body_sha256) = p_dedup
			  and coalesce(i.event_type, '') = coalesce(p_event_type, '')) then
		return null;
	end if;
	return v_id;
end
$$;

-- accept_batch() stores deliveries as if accept() ran for each in turn, in
-- the caller's one transaction: the responder's group commit sends whatever
-- queued up as one call, so the batch costs one statement and one commit,
-- and a single delivery is a batch of one.  Row k of the result answers
-- delivery k.
--
-- The replay defence (p_body_dedup: the provider does not sign its
-- delivery id) compares what was signed: p_signed_sha256 when the signature
-- does not cover the raw body (Twilio's form callbacks), else the body's
-- hash.  Signed content seen before under the same type is a duplicate of
-- the first delivery; under another type (the type is not signed either:
-- Shopify's topic) it is stored, held in state 'review' with review_of =
-- the first delivery's id, and answered as stored (held = true); at most
-- 4 copies of one signed content are held (one replayed body cannot fill
-- the inbox), a fifth other type is answered as a duplicate of the first.  A held
-- copy never owns its delivery key (the key is as unsigned as the type), so
-- the genuine delivery with that id is stored and delivered.  A delivery
-- whose id is owned by other signed content is judged by its content as if
-- the id were free; content never stored under an owned id is stored and
-- held (review_of = the owner): which of the two is genuine is not known.  The key
-- includes the endpoint: each endpoint of one account stores its own copy.
-- Past the inbox's horizon the ledger (migration 010) remembers what was
-- signed: a delivery it knows that no row carries any more is answered as
-- a duplicate of the first intake id and stores nothing.
create or replace function hookinbox.accept_batch(
	p_endpoint text[], p_provider text[], p_account text[], p_environment text[],
	p_event_id text[], p_event_type text[], p_object_id text[], p_event_version bigint[],
	p_headers jsonb[], p_body bytea[], p_body_dedup boolean[],
	p_signed_sha256 bytea[], p_note text[],
	out id bigint, out duplicate boolean, out held boolean)
returns setof record
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
	v_hash bytea;
	v_dedup bytea;
	v_first bigint;
	v_first_type text;
	v_held_only boolean;
	v_key bigint;
	v_hold boolean;
	v_gone bigint;
	v_gone_type text;
	v_stored bigint[];
	v_kd bytea;
begin
	-- Group commit's batches, when every id is signed: one statement stores
	-- each delivery that the steps below would store at once (its key
	-- free, the ledger knowing none of the batch), in batch order, so that
	-- the batch has one executor start-up, not one per delivery.  Row k of
	-- v_stored is the id stored for delivery k, else NULL: a key taken (by
	-- a row there, or by an earlier delivery of this batch), and all of
	-- them when the ledger knows any one.  The steps below answer the NULLs
	-- as before: the deliveries stored here own keys the others cannot
	-- meet, and a batch the ledger knows takes those steps whole.  (Its
	-- start-up costs more than two deliveries' statements: from 3 on.)
	if array_length(p_event_id, 1) > 2 and false = all (p_body_dedup) then
		with s as (
			insert into hookinbox.inbox as i (endpoint, provider, account,
				environment, event_id, event_type, object_id, event_version,
				body_sha256, body_dedup, signed_sha256, intake_note, headers, body)
			select u.endpoint, u.provider, u.account, u.environment, u.event_id,
			       u.event_type, u.object_id, u.event_version, sha256(u.body), false,
			       u.signed_sha256, u.note, coalesce(u.headers, '{}'), u.body
			  from unnest(p_endpoint, p_provider, p_account, p_environment, p_event_id,
				      p_event_type, p_object_id, p_event_version, p_headers, p_body,
				      p_signed_sha256, p_note)
			       with ordinality as u(endpoint, provider, account, environment, event_id,
						    event_type, object_id, event_version, headers, body,
						    signed_sha256, note, k)
			 where not exists (select 1
					     from unnest(p_endpoint, p_provider, p_account, p_environment,
							 p_event_id) as b(endpoint, provider, account, environment,
									 event_id),
						  hookinbox.ledger l
					    where l.endpoint = b.endpoint
					      and l.digest = hookinbox.key_digest(b.provider, b.account,
						      b.environment, b.event_id))
			 order by u.k
			on conflict (provider, account, environment, event_id, endpoint)
				where review_of is null do nothing
			returning i.id, i.provider, i.account, i.environment, i.event_id, i.endpoint)
		select array_agg(s.id order by d.k) into v_stored
		  from (select b.*, row_number() over (partition by b.provider, b.account, b.environment,
							 b.event_id, b.endpoint order by b.k) as nth
			  from unnest(p_endpoint, p_provider, p_account, p_environment, p_event_id)
			       with ordinality as b(endpoint, provider, account, environment, event_id, k)) d
		  left join s on d.nth = 1 and s.provider = d.provider and s.account = d.account
			and s.environment = d.environment and s.event_id = d.event_id
			and s.endpoint = d.endpoint;
	end if;
	for k in 1 .. coalesce(array_length(p_event_id, 1), 0) loop
		id := v_stored[k];
		held := false;
		if id is not null then
			duplicate := false;
			return next;
			continue;
		end if;
		v_hash := sha256(p_body[k]);
		-- The common case in one statement: a signed id the ledger does not
		-- know and no row owns is stored, as the steps below would store it.
		-- Anything else (the ledger knows it, the key is taken) stores
		-- nothing here and takes the steps below, from the ledger's probe
		-- on.  (Each statement of a PL/pgSQL function has its own executor
		-- start-up: the probe as a statement of its own cost more than the
		-- insert's own work, per delivery.)
		if p_body_dedup[k] is false then
			v_kd := hookinbox.key_digest(p_provider[k], p_account[k], p_environment[k], p_event_id[k]);
			insert into hookinbox.inbox as i (endpoint, provider, account,
				environment, event_id, event_type, object_id, event_version,
				body_sha256, body_dedup, signed_sha256, intake_note, headers, body)
			select p_endpoint[k], p_provider[k], p_account[k], p_environment[k],
				p_event_id[k], p_event_type[k], p_object_id[k],
				p_event_version[k], v_hash, false, p_signed_sha256[k],
				p_note[k], coalesce(p_headers[k], '{}'), p_body[k]
			 where not exists (select 1 from hookinbox.ledger l
					    where l.endpoint = p_endpoint[k]
					      and l.digest = v_kd)
			on conflict (provider, account, environment, event_id, endpoint)
				where review_of is null do nothing
			returning i.id into id;
			if id is not null then
				duplicate := false;
				return next;
				continue;
			end if;
		end if;
		v_dedup := coalesce(p_signed_sha256[k], v_hash);
		-- one probe of the ledger; the rest only when it knows the digest
		select l.first_id, l.first_type into v_gone, v_gone_type
		  from hookinbox.ledger l
		 where l.endpoint = p_endpoint[k]
		   and l.digest = case when p_body_dedup[k] then v_dedup
				       else hookinbox.key_digest(p_provider[k], p_account[k],
						p_environment[k], p_event_id[k]) end;
		if v_gone is not null then
			id := hookinbox.ledger_first(p_endpoint[k], p_provider[k], p_account[k],
				p_environment[k], p_event_id[k], p_event_type[k], p_body_dedup[k], v_dedup);
			if id is not null then
				duplicate := true;
				return next;
				continue;
			end if;
		end if;
		-- Three attempts: a conflicting row can vanish between the insert and
		-- the lookup only if the retention purge deleted it in between, and
		-- a held copy can be stored by a concurrent delivery.
		-- The first delivery may be purged while a copy held for review
		-- stays: no unique index stops a new first row then, so the insert
		-- is skipped and the held copy found below is the replay defence.
		-- So is the ledger's content entry once every row is gone: under
		-- another type the delivery is held (review_of its first id).
		if not p_body_dedup[k] then
			v_gone := null;
		end if;
		-- (the probes only where the content decides: not for a signed id)
		v_held_only := false;
		if p_body_dedup[k] then
			v_held_only := (v_gone is not null
				     or exists (select 1 from hookinbox.inbox i
						 where i.endpoint = p_endpoint[k] and i.body_dedup
						   and i.review_of is not null
						   and coalesce(i.signed_sha256, i.body_sha256) = v_dedup))
				and not exists (select 1 from hookinbox.inbox i
						 where i.endpoint = p_endpoint[k] and i.body_dedup
						   and i.review_of is null
						   and coalesce(i.signed_sha256, i.body_sha256) = v_dedup);
		end if;
		<<attempts>>
		for attempt in 1..3 loop
			if p_body_dedup[k] is false then
				-- a signed id: its delivery key is the only unique key it can
				-- meet (the content keys are partial on body_dedup), so the
				-- insert probes that index alone before inserting
				insert into hookinbox.inbox as i (endpoint, provider, account,
					environment, event_id, event_type, object_id, event_version,
					body_sha256, body_dedup, signed_sha256, intake_note, headers, body)
				values (p_endpoint[k], p_provider[k], p_account[k], p_environment[k],
					p_event_id[k], p_event_type[k], p_object_id[k],
					p_event_version[k], v_hash, false, p_signed_sha256[k],
					p_note[k], coalesce(p_headers[k], '{}'), p_body[k])
				on conflict (provider, account, environment, event_id, endpoint)
					where review_of is null do nothing
				returning i.id into id;
			elsif not v_held_only then
				insert into hookinbox.inbox as i (endpoint, provider, account,
					environment, event_id, event_type, object_id, event_version,
					body_sha256, body_dedup, signed_sha256, intake_note, headers, body)
				values (p_endpoint[k], p_provider[k], p_account[k], p_environment[k],
					p_event_id[k], p_event_type[k], p_object_id[k],
					p_event_version[k], v_hash, p_body_dedup[k], p_signed_sha256[k],
					p_note[k], coalesce(p_headers[k], '{}'), p_body[k])
				on conflict do nothing
				returning i.id into id;
			end if;
			if id is not null then
				duplicate := false;
				exit attempts;
			end if;
			-- A new statement sees the row a concurrent delivery (or an
			-- earlier one of this batch) stored.
			-- (a held copy does not own its key: migration 009)
			select i.id into id from hookinbox.inbox i
			 where i.provider = p_provider[k] and i.account = p_account[k]
			   and i.environment = p_environment[k] and i.event_id = p_event_id[k]
			   and i.endpoint = p_endpoint[k] and i.review_of is null;
			-- The id taken by other signed content (the id is not signed):
			-- this delivery is judged by its content, as if the id were
			-- free.
			v_key := id;
			if v_key is not null and p_body_dedup[k] then
				if not exists (select 1 from hookinbox.inbox i
						where i.id = v_key
						  and coalesce(i.signed_sha256, i.body_sha256) = v_dedup) then
					id := null;
				end if;
			end if;
			if id is null and p_body_dedup[k] then
				select i.id, i.event_type into v_first, v_first_type from hookinbox.inbox i
				 where i.endpoint = p_endpoint[k] and i.body_dedup and i.review_of is null
				   and coalesce(i.signed_sha256, i.body_sha256) = v_dedup;
				if v_first is null then
					-- the first delivery purged: a held copy is the replay
					-- defence (the one of the same type first, so a replay
					-- of it is its duplicate)
					select i.id, i.event_type into v_first, v_first_type from hookinbox.inbox i
					 where i.endpoint = p_endpoint[k] and i.body_dedup and i.review_of is not null
					   and coalesce(i.signed_sha256, i.body_sha256) = v_dedup
					 order by coalesce(i.event_type, '') = coalesce(p_event_type[k], '') desc, i.id
					 limit 1;
				end if;
				if v_first is null and v_gone is not null then
					-- every row of it purged: the ledger's first
					v_first := v_gone;
					v_first_type := nullif(v_gone_type, '');
				end if;
				-- this content never stored, and the id's owner has other
				-- content: which is genuine cannot be told (a captured body
				-- may have taken the id first), so this one is kept, held
				v_hold := v_first is null and v_key is not null;
				if v_hold then
					v_first := v_key;
				end if;
				if v_first is not null and not v_hold
				   and v_first_type is not distinct from p_event_type[k] then
					id := v_first;
				elsif v_first is not null then
					-- the same signed content under another type: held
					select i.id into id from hookinbox.inbox i
					 where i.endpoint = p_endpoint[k] and i.body_dedup
					   and i.review_of is not null
					   and coalesce(i.signed_sha256, i.body_sha256) = v_dedup
					   and coalesce(i.event_type, '') = coalesce(p_event_type[k], '');
					if id is null and not v_hold and (select count(*) from hookinbox.inbox i
							    where i.endpoint = p_endpoint[k] and i.body_dedup
							      and i.review_of is not null
							      and coalesce(i.signed_sha256, i.body_sha256) = v_dedup)
							   >= 4 then
						-- one signed body holds at most 4 copies (4 other
						-- types): beyond, a duplicate of the first, not stored
						id := v_first;
					elsif id is null then
						insert into hookinbox.inbox as i (endpoint, provider, account,
							environment, event_id, event_type, object_id, event_version,
							body_sha256, body_dedup, signed_sha256, intake_note, headers,
							body, state, review_of)
						values (p_endpoint[k], p_provider[k], p_account[k],
							p_environment[k], p_event_id[k], p_event_type[k],
							p_object_id[k], p_event_version[k], v_hash, true,
							p_signed_sha256[k], p_note[k], coalesce(p_headers[k], '{}'),
							p_body[k], 'review', v_first)
						on conflict do nothing
						returning i.id into id;
						if id is not null then
							duplicate := false;
							held := true;
							exit attempts;
						end if;
						continue attempts;
					end if;
				end if;
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

-- accept_one() is accept_batch() for one delivery, as the responder calls
-- it in single-row mode: the same answer, for less of PostgreSQL's work.  A signed id the
-- ledger does not know and no row owns, the common case, is stored by its
-- one statement, the very insert of accept_batch()'s first step; anything
-- else is accept_batch()'s whole judgement (whose first step then stores
-- nothing again).  Scalars, not arrays, and a single row, not a set: no
-- array is built, read or subscripted and no result set is kept, which
-- saves about a sixth of PostgreSQL's instructions for one delivery
-- (BENCHMARKS.md).
create or replace function hookinbox.accept_one(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_body_dedup boolean,
	p_signed_sha256 bytea, p_note text,
	out id bigint, out duplicate boolean, out held boolean)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
	v_digest bytea;
begin
	if p_body_dedup is false then
		-- a simple expression, evaluated once: in the statement, the
		-- ledger probe would build it twice (scan key and recheck)
		v_digest := hookinbox.key_digest(p_provider, p_account, p_environment, p_event_id);
		insert into hookinbox.inbox as i (endpoint, provider, account,
			environment, event_id, event_type, object_id, event_version,
			body_sha256, body_dedup, signed_sha256, intake_note, headers, body)
		select p_endpoint, p_provider, p_account, p_environment, p_event_id,
			p_event_type, p_object_id, p_event_version, sha256(p_body), false,
			p_signed_sha256, p_note, coalesce(p_headers, '{}'), p_body
		 where not exists (select 1 from hookinbox.ledger l
				    where l.endpoint = p_endpoint and l.digest = v_digest)
		on conflict (provider, account, environment, event_id, endpoint)
			where review_of is null do nothing
		returning i.id into id;
		if id is not null then
			duplicate := false;
			held := false;
			return;
		end if;
	end if;
	select b.id, b.duplicate, b.held into id, duplicate, held
	  from hookinbox.accept_batch(array[p_endpoint], array[p_provider], array[p_account],
		array[p_environment], array[p_event_id], array[p_event_type], array[p_object_id],
		array[p_event_version], array[p_headers], array[p_body], array[p_body_dedup],
		array[p_signed_sha256], array[p_note]) b;
end
$$;

-- the form of accept_batch() responders before 0.2 call (no signed
-- content hash, no note): kept so that the schema can be upgraded first
create or replace function hookinbox.accept_batch(
	p_endpoint text[], p_provider text[], p_account text[], p_environment text[],
	p_event_id text[], p_event_type text[], p_object_id text[], p_event_version bigint[],
	p_headers jsonb[], p_body bytea[], p_body_dedup boolean[],
	out id bigint, out duplicate boolean)
returns setof record
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
	select b.id, b.duplicate
	  from hookinbox.accept_batch(p_endpoint, p_provider, p_account, p_environment,
		p_event_id, p_event_type, p_object_id, p_event_version, p_headers, p_body,
		p_body_dedup, array_fill(null::bytea, array[coalesce(array_length(p_event_id, 1), 0)]),
		array_fill(null::text, array[coalesce(array_length(p_event_id, 1), 0)])) b;
$$;

-- one delivery, for psql and scripts (the responder calls accept_one and
-- accept_batch)
create or replace function hookinbox.accept(
	p_endpoint text, p_provider text, p_account text, p_environment text,
	p_event_id text, p_event_type text, p_object_id text, p_event_version bigint,
	p_headers jsonb, p_body bytea, p_body_dedup boolean,
	out id bigint, out duplicate boolean)
language sql
set search_path = pg_catalog, pg_temp
as $$
	select b.id, b.duplicate
	  from hookinbox.accept_one(p_endpoint, p_provider, p_account, p_environment,
		p_event_id, p_event_type, p_object_id, p_event_version, p_headers, p_body,
		p_body_dedup, null, null) b;
$$;

-- Count rejected requests (no body, no header, no address is stored).  One
-- call adds at most 1,000,000 (a responder flushes its counts every ten
-- seconds), and a count stops at the bigint limit instead of failing every
-- later flush.
create or replace function hookinbox.reject(p_endpoint text, p_reason text, p_count bigint default 1)
returns void
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
	insert into hookinbox.rejection (hour, endpoint, reason, count)
	values (date_trunc('hour', now()), left(p_endpoint, 64), left(p_reason, 64),
		least(greatest(p_count, 0), 1000000))
	on conflict (hour, endpoint, reason) do update
	   set count = rejection.count
		+ least(excluded.count, 9223372036854775807 - rejection.count);
$$;
