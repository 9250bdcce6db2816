/* SPDX-License-Identifier: ISC */
/*
 * naive.c - the bench's naive intake: what a developer would write in an
 * afternoon, as the yardstick for hookinbox's one-commit mode.  A
 * single-threaded FastCGI responder (libfcgi's accept loop) that checks the
 * Stripe-Signature (HMAC-SHA256 of "t.body", 300 s tolerance), parses the
 * body with json-c, and stores it with one prepared
 *   INSERT ... ON CONFLICT (event_id) DO NOTHING RETURNING id
 * (a SELECT of the first id when it conflicts), synchronous_commit as the
 * server has it; answers {"id":N,"duplicate":bool} like hookinbox.
 *
 *   naive.fcgi -c FILE    FILE: "conninfo=..." and "secret_file=..." lines
 *
 * The table is bench.naive_inbox (bench/run.pl creates it).  Built only
 * as obj/bench/naive.fcgi (bench/bench.mk); never installed.
 */
#include <fcgiapp.h>
#include <json.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BODY (1024 * 1024)

int main(int argc, char **argv);

static char conninfo[1024], secret[256];
static unsigned char signed_buf[32 + MAX_BODY]; /* "t." and the body */

static void
read_conf(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], sf[1024] = "";

	if (f == NULL) {
		perror(path);
		exit(78);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "conninfo=", 9) == 0)
			snprintf(conninfo, sizeof(conninfo), "%s", line + 9);
		else if (strncmp(line, "secret_file=", 12) == 0)
			snprintf(sf, sizeof(sf), "%s", line + 12);
	}
	fclose(f);
	f = fopen(sf, "r");
	if (f == NULL || fgets(secret, sizeof(secret), f) == NULL) {
		perror(sf);
		exit(78);
	}
	fclose(f);
	secret[strcspn(secret, "\n")] = '\0';
}

/* Stripe-Signature "t=...,v1=<hex>" over "t.body" */
static int
verify(const char *header, const unsigned char *body, size_t len)
{
	const char *t = header ? strstr(header, "t=") : NULL;
	const char *v1 = header ? strstr(header, "v1=") : NULL;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	long long ts;
	size_t n;

	if (t == NULL || v1 == NULL)
		return -1;
	ts = strtoll(t + 2, NULL, 10);
	if (llabs((long long)time(NULL) - ts) > 300)
		return -1;
	n = (size_t)snprintf((char *)signed_buf, 32, "%lld.", ts);
	memcpy(signed_buf + n, body, len);
	HMAC(EVP_sha256(), secret, (int)strlen(secret), signed_buf, n + len, mac, &maclen);
	for (unsigned int i = 0; i < maclen; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	if (strlen(v1 + 3) < 2 * maclen || CRYPTO_memcmp(hex, v1 + 3, 2 * maclen) != 0)
		return -1;
	return 0;
}

static void
answer(FCGX_Request *req, int status, const char *body)
{
	FCGX_FPrintF(req->out, "Status: %d\r\nContent-Type: application/json\r\n\r\n%s\n", status,
		     body);
}

static PGconn *
db(void)
{
	static PGconn *conn;

	if (conn != NULL && PQstatus(conn) == CONNECTION_OK)
		return conn;
	if (conn != NULL)
		PQfinish(conn);
	conn = PQconnectdb(conninfo);
	if (PQstatus(conn) != CONNECTION_OK) {
		fprintf(stderr, "naive: %s", PQerrorMessage(conn));
		return conn;
	}
	PQclear(PQprepare(
		conn, "ins",
		"insert into bench.naive_inbox (event_id, event_type, object_id, created, "
		"body) values ($1, $2, $3, $4, $5) on conflict (event_id) do nothing "
		"returning id",
		5, NULL));
	PQclear(PQprepare(conn, "sel", "select id from bench.naive_inbox where event_id = $1", 1,
			  NULL));
	return conn;
}

static void
serve(FCGX_Request *req, unsigned char *body)
{
	const char *cl = FCGX_GetParam("CONTENT_LENGTH", req->envp);
	long len = cl ? strtol(cl, NULL, 10) : -1;
	json_object *o, *v, *data, *obj;
	const char *vals[5];
	int lens[5] = {0, 0, 0, 0, 0}, fmts[5] = {0, 0, 0, 0, 1};
	char created[32] = "", reply[96];
	PGresult *res;
	PGconn *conn;
	bool dup = false;

	if (len < 0 || len > MAX_BODY || FCGX_GetStr((char *)body, (int)len, req->in) != len) {
		answer(req, 400, "{\"error\":\"bad length\"}");
		return;
	}
	if (verify(FCGX_GetParam("HTTP_STRIPE_SIGNATURE", req->envp), body, (size_t)len) != 0) {
		answer(req, 401, "{\"error\":\"signature\"}");
		return;
	}
	body[len] = '\0';
	o = json_tokener_parse((const char *)body);
	if (o == NULL || !json_object_object_get_ex(o, "id", &v)) {
		answer(req, 400, "{\"error\":\"no event id\"}");
		json_object_put(o);
		return;
	}
	vals[0] = json_object_get_string(v);
	vals[1] = json_object_object_get_ex(o, "type", &v) ? json_object_get_string(v) : NULL;
	vals[2] = json_object_object_get_ex(o, "data", &data) &&
				  json_object_object_get_ex(data, "object", &obj) &&
				  json_object_object_get_ex(obj, "id", &v)
			  ? json_object_get_string(v)
			  : NULL;
	if (json_object_object_get_ex(o, "created", &v))
		snprintf(created, sizeof(created), "%" PRId64, json_object_get_int64(v));
	vals[3] = created[0] ? created : NULL;
	vals[4] = (const char *)body;
	lens[4] = (int)len;
	conn = db();
	res = PQexecPrepared(conn, "ins", 5, vals, lens, fmts, 0);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 0) {
		PQclear(res);
		res = PQexecPrepared(conn, "sel", 1, vals, NULL, NULL, 0);
		dup = true;
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		fprintf(stderr, "naive: %s", PQresultErrorMessage(res));
		answer(req, 503, "{\"error\":\"storage unavailable\"}");
	} else {
		snprintf(reply, sizeof(reply), "{\"id\":%s,\"duplicate\":%s}",
			 PQgetvalue(res, 0, 0), dup ? "true" : "false");
		answer(req, 200, reply);
	}
	PQclear(res);
	json_object_put(o);
}

int
main(int argc, char **argv)
{
	FCGX_Request req;
	unsigned char *body = malloc(MAX_BODY + 1);

	if (argc != 3 || strcmp(argv[1], "-c") != 0 || body == NULL) {
		fprintf(stderr, "usage: naive.fcgi -c FILE\n");
		return 64;
	}
	read_conf(argv[2]);
	FCGX_Init();
	FCGX_InitRequest(&req, 0, 0);
	while (FCGX_Accept_r(&req) >= 0) {
		serve(&req, body);
		FCGX_Finish_r(&req);
	}
	return EXIT_SUCCESS;
}
