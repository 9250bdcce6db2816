/* SPDX-License-Identifier: ISC */
/*
 * pgarray.h - one-dimensional PostgreSQL arrays in the binary wire format
 *
 * The responder hands a batch of deliveries to accept_batch() as eleven
 * array parameters.  Sent in binary, a body goes over as its own bytes (no
 * hex, no escaping) and the server does no parsing.  A builder is reused
 * from batch to batch: pgarray_reset keeps its buffer.
 */
#ifndef HOOKINBOX_PGARRAY_H
#define HOOKINBOX_PGARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* element types, by their fixed OIDs in pg_type (src/include/catalog/pg_type.dat) */
typedef enum pgarray_type {
	PGARRAY_BOOL = 16,
	PGARRAY_BYTEA = 17,
	PGARRAY_INT8 = 20,
	PGARRAY_TEXT = 25,
	PGARRAY_JSONB = 3802,
} pgarray_type;

typedef struct pgarray pgarray;

pgarray *pgarray_new(pgarray_type type);
void pgarray_free(pgarray *a);
/* no elements; the buffer is kept */
void pgarray_reset(pgarray *a);

void pgarray_add_null(pgarray *a);
/* TEXT, BYTEA: the bytes as they are; JSONB: JSON text */
void pgarray_add(pgarray *a, const void *data, size_t len);
void pgarray_add_str(pgarray *a, const char *s); /* NULL adds a NULL element */
void pgarray_add_int8(pgarray *a, int64_t v);
void pgarray_add_bool(pgarray *a, bool v);

/* the parameter value (binary format) and its length; valid until the next change */
const char *pgarray_value(pgarray *a, int *len);

#endif
