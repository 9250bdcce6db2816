-- SPDX-License-Identifier: ISC
-- 003: how inbox rows are stored.
--
-- A row longer than about 2 KB (the default toast_tuple_target) has its
-- body compressed with pglz and, when that does not bring it under 2 KB,
-- moved to the TOAST table in ~2 KB chunks: a 2 KB event became three heap
-- inserts and two more index inserts, in the transaction the provider is
-- waiting for.  Webhook events are mostly 1-8 KB, so rows up to a page stay
-- whole and uncompressed; larger bodies are still compressed and moved out,
-- with lz4 where the server has it (several times cheaper in CPU than pglz,
-- for a little less compression).
alter table hookinbox.inbox set (toast_tuple_target = 8160);

select exists (select 1 from pg_settings
		where name = 'default_toast_compression' and 'lz4' = any(enumvals)) as has_lz4 \gset
\if :has_lz4
alter table hookinbox.inbox alter column body set compression lz4;
alter table hookinbox.inbox alter column headers set compression lz4;
\endif
