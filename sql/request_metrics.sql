-- SPDX-License-Identifier: ISC
-- The responders' request-duration histogram (migration 012), (re)created
-- and granted on every install run, from roles.sql.
--
-- The bucket bounds are OpenTelemetry's advice for http.server.request.duration
-- (seconds); the responder and the worker's export both use this list.
create or replace function hookinbox.request_duration_bounds()
returns double precision[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
	select '{0.005,0.01,0.025,0.05,0.075,0.1,0.25,0.5,0.75,1,2.5,5,7.5,10}'::double precision[];
$$;

-- Add a responder's counts: p_buckets per bucket (not cumulative, +Inf last),
-- p_sum seconds.  A malformed array or a negative count is refused, not
-- stored: the counts stay what Prometheus needs (only growing).
create or replace function hookinbox.count_requests(p_endpoint text, p_provider text,
	p_outcome text, p_status integer, p_buckets bigint[], p_sum double precision)
returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
	if coalesce(array_length(p_buckets, 1), 0)
	       <> array_length(hookinbox.request_duration_bounds(), 1) + 1
	   or array_ndims(p_buckets) <> 1
	   or exists (select 1 from unnest(p_buckets) b where b is null or b < 0 or b > 1000000)
	   or p_sum is null or p_sum < 0 or p_sum = 'Infinity'::double precision then
		raise exception 'bad request counts' using errcode = '22023';
	end if;
	insert into hookinbox.request_duration as d
		(endpoint, provider, outcome, status, buckets, sum_seconds)
	values (left(p_endpoint, 64), left(p_provider, 32), left(p_outcome, 16), p_status,
		p_buckets, p_sum)
	on conflict (endpoint, provider, outcome, status) do update
	   set buckets = (select array_agg(least(a, 9223372036854775807 - b) + b order by i)
			    from unnest(d.buckets, excluded.buckets) with ordinality u(a, b, i)),
	       sum_seconds = d.sum_seconds + excluded.sum_seconds;
end
$$;

grant select, insert, update on hookinbox.request_duration to hookinbox_owner;
alter function hookinbox.count_requests(text, text, text, integer, bigint[], double precision)
	owner to hookinbox_owner;
revoke all on function hookinbox.count_requests(text, text, text, integer, bigint[],
	double precision) from public, hookinbox_worker;
-- hookinbox_admin as on everything in the schema (roles.sql), here too
-- because roles.sql grants it before it includes this file: a first install
-- gets the grants a second run gives
grant execute on function hookinbox.count_requests(text, text, text, integer, bigint[],
	double precision) to hookinbox_intake, hookinbox_admin;
revoke all on function hookinbox.request_duration_bounds() from public;
grant execute on function hookinbox.request_duration_bounds() to hookinbox_owner,
	hookinbox_worker, hookinbox_admin;
-- the worker's metrics file exports them
grant select on hookinbox.request_duration to hookinbox_worker;
