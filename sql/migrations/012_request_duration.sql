-- SPDX-License-Identifier: ISC
-- The responders' request durations, as a histogram by endpoint, provider,
-- outcome and status: one row per label set, counting since the install
-- (no hour, never purged), so that the series the worker exports only grow
-- and rate() over them is right in cron mode and across hosts.  The row
-- count is bounded by the configured endpoints ('(unknown)' for the rest)
-- times the few outcomes and statuses.
create table hookinbox.request_duration (
	endpoint    text not null,
	provider    text not null,
	outcome     text not null,
	status      integer not null,
	-- requests per bucket, not cumulative: the bounds of
	-- hookinbox.request_duration_bounds() in order, then +Inf
	buckets     bigint[] not null,
	sum_seconds double precision not null default 0,
	primary key (endpoint, provider, outcome, status)
);
